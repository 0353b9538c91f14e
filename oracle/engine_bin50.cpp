// The step engine instantiated for ExactArith<bin50> (one type per file: parallel builds).
#include "oracle/engine.hpp"

namespace muoncheck::oracle {
template class Engine<ExactArith<bin50>>;
}  // namespace muoncheck::oracle
