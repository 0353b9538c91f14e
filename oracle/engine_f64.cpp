// The step engine instantiated for ExactArith<f64> (one type per file: parallel builds).
#include "oracle/engine.hpp"

namespace muoncheck::oracle {
template class Engine<ExactArith<f64>>;
}  // namespace muoncheck::oracle
