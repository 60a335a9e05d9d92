#include "jobque.h"

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

std::string chain_category(int64_t nstages, int64_t tag, const JobqueProfile& profile) {
  if (tag != 0) {
    if (const ProfileCategory* c = profile.category(tag)) return c->name;
    return legacy_tag_name(tag);
  }
  if (nstages >= 3) return "attn chain";
  if (nstages == 2) return "ffn chain";
  if (nstages == 1) return "classifier";
  return std::string(kStdKernel);
}

std::string category_color(std::string_view name, const JobqueProfile& profile) {
  for (const ProfileCategory& c : profile.categories)
    if (c.name == name && !c.color.empty()) return c.color;
  auto starts = [&](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  if (starts("attn")) return "#5E96DE";
  if (starts("ffn")) return "#43B08A";
  if (name == "classifier") return "#AC82E4";
  if (name == "moe experts") return "#E08563";
  if (name == "router") return "#4FC3D0";
  if (name == "park/reduce") return "#D678B4";
  if (name == "deltanet") return "#8385E8";
  return "#C39536";  // std kernel and everything else
}

}  // namespace jqtrace
