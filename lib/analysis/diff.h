#pragma once
// `diff A B`: two traces' range stats side by side, per group and per marker kind. A pure
// function of the two stats (same scope options and grouping applied to each trace).
#include <cstdint>
#include <string>
#include <vector>

#include "markers.h"
#include "stats.h"

namespace jqtrace {

struct GroupSide {
  bool present = false;  ///< the group exists on this side
  bool guessed = false;  ///< named by stage count on this side (SPEC §1.4)
  int64_t busy_ns = 0;
  double share_pct = 0;
  uint64_t events = 0;
};

struct GroupDiff {
  std::string name;
  GroupSide a, b;
  double share_delta_pp = 0;  ///< b - a
  double busy_ratio = 0;      ///< b / a busy; meaningful only when has_ratio
  bool has_ratio = false;     ///< false when A's busy is 0
};

struct KindSide {
  bool present = false;
  uint64_t units = 0;
  double unit_p50_ns = 0;
};

struct KindDiff {
  std::string kind;
  KindSide a, b;
};

struct TraceDiff {
  std::vector<GroupDiff> groups;  ///< A's order, then groups only B has
  std::vector<KindDiff> kinds;    ///< A's order, then kinds only B has
};

TraceDiff diff_stats(const RangeStats& a, const RangeStats& b, const std::vector<KindSummary>& kinds_a,
                     const std::vector<KindSummary>& kinds_b);

}  // namespace jqtrace
