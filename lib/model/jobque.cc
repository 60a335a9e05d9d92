#include "jobque.h"

#include <cstdint>

#include "numbers.h"

namespace jqtrace {

JobqueNames JobqueNames::interned(Interner& names) {
  return {names.intern(kPublish), names.intern(kChunk), names.intern(kStageWait), names.intern(kWake),
          names.intern(kFifoJob)};
}

JobqueNames JobqueNames::found(const Interner& names) {
  return {names.find(kPublish), names.find(kChunk), names.find(kStageWait), names.find(kWake), names.find(kFifoJob)};
}

std::string legacy_tag_name(int64_t tag) {
  static const char* const kNames[] = {"attn chain",  "attn std", "ffn chain", "ffn per-op",
                                       "classifier",  "moe experts", "shexp", "ple",
                                       "router",      "park/reduce", "deltanet"};
  if (tag >= 1 && tag <= 11) return kNames[tag - 1];
  return "tag " + std::to_string(tag);
}

const char* attribution_name(Attribution a) {
  switch (a) {
    case Attribution::none: return "event names";
    case Attribution::profile: return "profile";
    case Attribution::legacy_tags: return "legacy tags";
    case Attribution::stage_count: return "stage count";
    case Attribution::unread_profile: return "unread profile";
  }
  return "";
}

Attribution chain_attribution(const JobqueProfile& profile, bool any_tag) {
  if (!profile.unread.empty()) return Attribution::unread_profile;
  if (!profile.categories.empty()) return Attribution::profile;
  return any_tag ? Attribution::legacy_tags : Attribution::stage_count;
}

namespace {

/// The old viewer's guess for a chain nothing names.
ChainName by_stage_count(int64_t nstages) {
  if (nstages >= 3) return {"attn chain", true};
  if (nstages == 2) return {"ffn chain", true};
  return {"classifier", true};
}

}  // namespace

ChainName chain_category(int64_t nstages, int64_t tag, const JobqueProfile& profile, Attribution attribution) {
  if (nstages == 0) return {std::string(kUnpublishedChain)};
  switch (attribution) {
    case Attribution::profile:
      if (tag == 0) return {std::string(kUntagged)};
      if (const ProfileCategory* c = profile.category(tag)) return {c->name};
      return {"tag " + std::to_string(tag)};
    case Attribution::legacy_tags:
      if (tag == 0) return by_stage_count(nstages);
      return {legacy_tag_name(tag)};
    case Attribution::unread_profile:  // the tag's name is in the profile nobody could read
      if (tag == 0) return {std::string(kUntagged)};
      return {"tag " + std::to_string(tag)};
    case Attribution::none:
    case Attribution::stage_count: break;
  }
  return by_stage_count(nstages);
}

int64_t category_tag(std::string_view name, const JobqueProfile& profile) {
  for (const ProfileCategory& c : profile.categories)
    if (c.name == name) return c.id;
  for (int64_t tag = 1; tag <= 11; ++tag)
    if (legacy_tag_name(tag) == name) return tag;
  if (name.substr(0, 4) == "tag ") {
    int64_t tag = 0;
    if (parse_integer(name.substr(4), &tag) == NumberStatus::ok) return tag;
  }
  return INT64_MAX;
}

std::string category_color(std::string_view name, const JobqueProfile& profile) {
  for (const ProfileCategory& c : profile.categories)
    if (c.name == name && !c.color.empty()) return c.color;
  // Groups no profile names: greys, so that no one reads them as a category, a ladder of
  // them from light to dark 51 levels a channel apart, so that no one mistakes one for
  // another (they were four greys 20 apart, and they hold the top shares of full rings).
  if (name == kUnpublishedChain) return "#CFCFCF";
  if (name == kUntagged) return "#9A9A9A";
  if (name == kFifoJobGroup) return "#666666";
  if (name == kWakeGroup) return "#333333";
  if (name == kOtherSpans) return "#B0B0B0";
  auto starts = [&](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  if (starts("attn")) return "#5E96DE";
  if (starts("ffn")) return "#43B08A";
  if (name == "classifier") return "#AC82E4";
  if (name == "moe experts") return "#E08563";
  if (name == "router") return "#4FC3D0";
  if (name == "park/reduce") return "#D678B4";
  if (name == "deltanet") return "#8385E8";
  return "#C39536";  // every other name
}

}  // namespace jqtrace
