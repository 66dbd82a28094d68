#include "hal/semaphore.h"

namespace strata::hal {

const RefTypeInfo Semaphore::kType = {"hal.semaphore"};

}  // namespace strata::hal
