#include "free_memory.h"

#include <climits>
#include <cstdlib>  // defines __GLIBC__ on glibc, which the test below needs

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace jqtrace {

void release_free_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

void reuse_freed_blocks() {
#ifdef __GLIBC__
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);  // nor is the heap's top given back when freed
#endif
}

}  // namespace jqtrace
