#pragma once
// The jobque timeline viewer's category rules (SPEC §1.4), kept identical to the viewer.
#include <cstdint>
#include <string>
#include <string_view>

#include "interner.h"
#include "profile.h"

namespace jqtrace {

/// The names of the jobque span kinds, as the tracer writes them.
inline constexpr std::string_view kPublish = "publish";
inline constexpr std::string_view kChunk = "chunk";
inline constexpr std::string_view kStageWait = "stage_wait";
inline constexpr std::string_view kWake = "wake";
inline constexpr std::string_view kFifoJob = "fifo_job";
inline constexpr std::string_view kStdKernel = "std kernel";

/// The interned ids of the jobque span names in one trace's name table, and the two tests
/// every layer makes of a span's name (one place, so that they cannot disagree).
struct JobqueNames {
  uint32_t publish = Interner::kNone, chunk = Interner::kNone, stage_wait = Interner::kNone,
           wake = Interner::kNone, fifo_job = Interner::kNone;

  /// The ids in names, adding the names (a reader's table, so ids compare in the hot path).
  static JobqueNames interned(Interner& names);
  /// The ids of the names a finished table has (kNone for the absent ones).
  static JobqueNames found(const Interner& names);

  /// Busy time (SPEC §2): chunk, fifo_job and publish.
  bool busy(int64_t name) const { return name == chunk || name == fifo_job || name == publish; }
  /// Spans of a chain, which take its category: publish, chunk and stage_wait.
  bool chained(int64_t name) const { return name == publish || name == chunk || name == stage_wait; }
};

/// A publish's args.stage packs the chain's stage count and its tag.
inline int64_t publish_nstages(int64_t stage) { return stage & 0xFF; }
inline int64_t publish_tag(int64_t stage) { return stage >> 8; }

/// The name a tag had before profiles existed ("tag N" past the known ones).
std::string legacy_tag_name(int64_t tag);

/// The category of a chain with this stage count (0: no publish seen) and tag.
std::string chain_category(int64_t nstages, int64_t tag, const JobqueProfile& profile);

/// The category's color: the profile's when it names one, else the viewer's palette.
std::string category_color(std::string_view name, const JobqueProfile& profile);

}  // namespace jqtrace
