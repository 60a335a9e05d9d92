#pragma once
// Handing freed memory back to the system between the passes of a command.

namespace jqtrace {

/// Returns the memory freed so far to the system. glibc keeps it in the arena of the thread
/// that allocated it, where a later pass on another thread does not reuse it, and that
/// pass's peak sits on top of it (measured: gaps -j 2 of a 200 MB trace, each class's
/// samples in a different thread's arena than the last's). Costs 0.2-1.3 ms a call there.
void release_free_memory();

/// From here on, big blocks come from the heap, where a freed one is reused, instead of
/// from mmap, where each block is new memory the kernel faults in and zeroes page by page.
/// For a command that builds and drops tables of a whole trace in turn (whatif's graph),
/// and does not call release_free_memory after: freed memory stays resident, to be reused.
void reuse_freed_blocks();

}  // namespace jqtrace
