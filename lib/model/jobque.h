#pragma once
// The jobque timeline viewer's category rules (SPEC §1.4), kept identical to the viewer.
#include <cstddef>
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

/// How a jobque trace's chains got their category names (SPEC §1.4), printed with every
/// document: from the trace's profile, from the tracer's legacy tag table (tags but no
/// profile categories), or guessed from stage counts (no tags at all). none: not a
/// jobque trace (groups are the events' own cat or name).
/// unread_profile: the trace has a profile jqtrace could not read (past its limits); its
/// tags are named "tag N".
enum class Attribution : uint8_t { none, profile, legacy_tags, stage_count, unread_profile };
const char* attribution_name(Attribution a);

/// Groups no profile names, each for what it holds (the old viewer lumped them all into
/// "std kernel", a name no trace carries): spans of other names in a jobque trace, wake
/// and fifo_job events, chains with chunks but no recorded publish, and chains whose
/// tag 0 says "no category" in a trace whose profile has categories.
inline constexpr std::string_view kOtherSpans = "other spans";
inline constexpr std::string_view kWakeGroup = "wake";
inline constexpr std::string_view kFifoJobGroup = "fifo job";
inline constexpr std::string_view kUnpublishedChain = "unpublished chain";
inline constexpr std::string_view kUntagged = "untagged";
/// The first four are every trace's categories 0..3 (in this order), so that a span's
/// category needs no lookup for them; they are listed only where they hold spans.
enum ReservedCategory : uint16_t { kOtherSpansCategory, kWakeCategory, kFifoJobCategory, kUnpublishedCategory };
inline constexpr std::size_t kReservedCategories = 4;

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

/// A lane whose last event ends this long before the trace's end stopped recording (its
/// ring filled up, SPEC §1.3) while the others went on; a lane that merely idles at the
/// end still records its wakes and waits. The margin: 10% of the span and at least 1 ms
/// (a parked worker can sleep through a short final token). Not for cut-off files, which
/// lose lane ends to the cut, nor windows, which end where their scope did.
inline bool lane_stopped_early(int64_t lane_last_end_ns, int64_t trace_start_ns, int64_t trace_end_ns) {
  int64_t span = trace_end_ns - trace_start_ns;
  int64_t margin = span / 10 > 1'000'000 ? span / 10 : 1'000'000;
  return span > 0 && trace_end_ns - lane_last_end_ns > margin;
}

/// A chain's category name, and whether it is a guess (named by its stage count).
struct ChainName {
  std::string name;
  bool guessed = false;
};

/// How the chains of a trace with this profile are named; any_tag: some publish carries
/// a tag other than 0.
Attribution chain_attribution(const JobqueProfile& profile, bool any_tag);

/// The category of a chain with this stage count (0: no publish seen) and tag.
ChainName chain_category(int64_t nstages, int64_t tag, const JobqueProfile& profile, Attribution attribution);

/// The category's color: the profile's when it names one, else the viewer's palette.
std::string category_color(std::string_view name, const JobqueProfile& profile);

/// The tag a category's publishes carry: the profile's id for it, a legacy name's tag
/// (attn chain 1 ... deltanet 11), N for "tag N"; INT64_MAX for the groups no tag names
/// (untagged, unpublished chain, fifo job, wake) and names it does not know.
int64_t category_tag(std::string_view name, const JobqueProfile& profile);

}  // namespace jqtrace
