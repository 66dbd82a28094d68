// Crosses two rules on purpose: a driver uses the VM and an LLVM header.
#include "hal/device.h"
#include "vm/context.h"
#include <llvm/Support/Error.h>
