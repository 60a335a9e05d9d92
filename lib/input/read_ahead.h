#pragma once
// Reading ahead on a thread of its own: the inner input (a decoder, typically) fills a small
// ring of buffers while the caller parses what came before, so that inflating a compressed
// trace overlaps parsing it instead of adding to it.
#include <memory>

#include "raw_input.h"

namespace jqtrace {

/// Runs inner's reads on another thread, `slots` buffers of `slot_bytes` ahead of the
/// reader. The answers (bytes, end, error, cut_short, consumed) are the inner input's, in
/// the same order; consumed() is as of the bytes handed out so far.
std::unique_ptr<RawInput> read_ahead(std::unique_ptr<RawInput> inner, std::size_t slot_bytes = 1 << 20,
                                     unsigned slots = 4);

}  // namespace jqtrace
