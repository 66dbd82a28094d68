// Keeps to the rules: the top of the runtime uses every layer.
#include "drivers/registry.h"
#include "hal/module/hal_module.h"
#include "vm/context.h"
