#include "hal/semaphore.h"

namespace strata::hal {

const vm::RefTypeInfo Semaphore::kType = {"hal.semaphore"};

}  // namespace strata::hal
