// The step engine instantiated for ExactArith<f128> (one type per file: parallel builds).
#include "oracle/engine.hpp"

namespace muoncheck::oracle {
template class Engine<ExactArith<f128>>;
}  // namespace muoncheck::oracle
