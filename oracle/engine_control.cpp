// The step engine instantiated for the control's rounding arithmetic.
#include "oracle/engine.hpp"

namespace muoncheck::oracle {
template class Engine<ControlArith>;
}  // namespace muoncheck::oracle
