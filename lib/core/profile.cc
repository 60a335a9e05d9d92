#include "profile.h"

#include <set>

#include "numbers.h"

namespace jqtrace {
namespace {

class ProfileReader {
 public:
  explicit ProfileReader(DiagnosticSink* diags) : diags_(diags) {}

  JobqueProfile read(const JsonValue& v) {
    JobqueProfile p;
    p.present = true;
    if (v.kind != JsonValue::Kind::object) {
      problem("profile-shape", "jobqueProfile is not an object", v.offset);
      return p;
    }
    read_version(v, &p);
    if (const JsonValue* lanes = v.member("lanes")) {
      if (!integer(*lanes, &p.lanes) || p.lanes < 1) {
        problem("profile-shape", "jobqueProfile.lanes is not a positive integer", lanes->offset);
        p.lanes = 0;
      }
    }
    if (const JsonValue* cats = array_member(v, "categories")) read_categories(*cats, &p);
    if (const JsonValue* marks = array_member(v, "markers")) read_markers(*marks, &p);
    return p;
  }

 private:
  void read_version(const JsonValue& v, JobqueProfile* p) {
    const JsonValue* version = v.member("version");
    if (!version) {
      problem("profile-shape", "jobqueProfile has no version", v.offset);
    } else if (!integer(*version, &p->version)) {
      problem("profile-shape", "jobqueProfile.version is not an integer", version->offset);
    } else if (p->version != 1) {
      problem("profile-version", "unsupported jobqueProfile version " + std::to_string(p->version) + " (expected 1)",
              version->offset);
    }
  }

  const JsonValue* array_member(const JsonValue& v, std::string_view key) {
    const JsonValue* m = v.member(key);
    if (m && m->kind != JsonValue::Kind::array) {
      problem("profile-shape", "jobqueProfile." + std::string(key) + " is not an array", m->offset);
      return nullptr;
    }
    return m;
  }

  /// An entry's id and name, or false (reported) when either is malformed.
  bool entry(const JsonValue& e, std::string_view what, int64_t min_id, int64_t* id, std::string* name) {
    if (e.kind != JsonValue::Kind::object) {
      problem("profile-shape", std::string(what) + " entry is not an object", e.offset);
      return false;
    }
    const JsonValue* idv = e.member("id");
    const JsonValue* namev = e.member("name");
    if (!idv || !integer(*idv, id) || *id < min_id) {
      problem("profile-shape",
              std::string(what) + " id is missing or not an integer >= " + std::to_string(min_id),
              idv ? idv->offset : e.offset);
      return false;
    }
    if (!namev || namev->kind != JsonValue::Kind::string || namev->text.empty()) {
      problem("profile-shape", std::string(what) + " " + std::to_string(*id) + " has no name",
              namev ? namev->offset : e.offset);
      return false;
    }
    *name = namev->text;
    return true;
  }

  void read_categories(const JsonValue& arr, JobqueProfile* p) {
    Seen seen;
    for (const JsonValue& e : arr.items) {
      ProfileCategory c;
      if (!entry(e, "category", 1, &c.id, &c.name)) continue;
      if (const JsonValue* color = e.member("color")) {
        if (color->kind != JsonValue::Kind::string || !is_hex_color(color->text))
          problem("profile-color", "category '" + c.name + "' color is not #RRGGBB", color->offset);
        else c.color = color->text;
      }
      if (first_time(seen, "category", c.id, c.name, e.offset)) p->categories.push_back(std::move(c));
    }
  }

  void read_markers(const JsonValue& arr, JobqueProfile* p) {
    Seen seen;
    for (const JsonValue& e : arr.items) {
      ProfileMarker m;
      if (!entry(e, "marker", 0, &m.id, &m.name)) continue;
      if (first_time(seen, "marker", m.id, m.name, e.offset)) p->markers.push_back(std::move(m));
    }
  }

  struct Seen {
    std::set<int64_t> ids;
    std::set<std::string> names;
  };
  /// False (reported) when the id or the name was defined before: the first one wins.
  bool first_time(Seen& seen, std::string_view what, int64_t id, const std::string& name, uint64_t offset) {
    if (!seen.ids.insert(id).second) {
      problem("profile-duplicate", std::string(what) + " id " + std::to_string(id) + " is defined twice", offset);
      return false;
    }
    if (!seen.names.insert(name).second) {
      problem("profile-duplicate", std::string(what) + " name '" + name + "' is defined twice", offset);
      return false;
    }
    return true;
  }

  static bool integer(const JsonValue& v, int64_t* out) {
    return v.kind == JsonValue::Kind::number && parse_integer(v.text, out) == NumberStatus::ok;
  }

  void problem(std::string_view rule, std::string message, uint64_t offset) {
    if (diags_) diags_->report(make_diagnostic(rule, std::move(message), offset));
  }

  DiagnosticSink* diags_;
};

}  // namespace

JobqueProfile interpret_profile(const JsonValue& value, DiagnosticSink* diags) {
  return ProfileReader(diags).read(value);
}

bool is_hex_color(std::string_view color) {
  if (color.size() != 7 || color[0] != '#') return false;
  for (char c : color.substr(1))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

}  // namespace jqtrace
