// Crosses a rule on purpose: the VM uses the HAL.
#include "vm/value.h"
#include "hal/device.h"
