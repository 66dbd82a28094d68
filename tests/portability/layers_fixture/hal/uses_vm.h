// Crosses two rules on purpose: the HAL uses the VM and the VM <-> HAL glue.
#include "vm/base/ref.h"
#include "vm/list.h"
#include "hal/module/hal_module.h"
