#include "saved_shares.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

namespace jqtrace::result {

bool looks_like_schema(std::string_view head, std::string_view schema) {
  std::size_t key = head.find("\"schema\"");
  if (key == std::string_view::npos) return false;
  std::size_t value = head.find('"', head.find(':', key));
  return value != std::string_view::npos && head.substr(value + 1, schema.size()) == schema;
}

bool read_saved_shares(std::string_view text, const SavedShares& what, BaselineShares* out, std::string* error) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());  // deep nesting must not overflow the stack
  if (doc.HasParseError()) {
    *error = std::string("not valid JSON: ") + rapidjson::GetParseError_En(doc.GetParseError()) + " at byte " +
             std::to_string(doc.GetErrorOffset());
    return false;
  }
  if (!doc.IsObject() || !doc.HasMember("schema") || !doc["schema"].IsString() ||
      std::string_view(doc["schema"].GetString()) != what.schema) {
    *error = "not a saved 'jqtrace " + std::string(what.command) + " --format json' (no \"schema\": \"" +
             std::string(what.schema) + "\")";
    return false;
  }
  std::string table_key(what.table);
  const char* table = table_key.c_str();
  bool has_by = !what.fixed_by.empty() || (doc.HasMember("by") && doc["by"].IsString());
  if (!has_by || !doc.HasMember(table) || !doc[table].IsArray()) {
    *error = "a " + std::string(what.command) + " JSON without " +
             (what.fixed_by.empty() ? "\"by\" or \"" + std::string(what.table) + "\"" : "\"" + std::string(what.table) + "\"");
    return false;
  }
  out->by = what.fixed_by.empty() ? doc["by"].GetString() : std::string(what.fixed_by);
  if (doc.HasMember("scope") && doc["scope"].IsString()) out->scope = doc["scope"].GetString();
  for (const auto& g : doc[table].GetArray()) {
    if (!g.IsObject() || !g.HasMember("name") || !g["name"].IsString() || !g.HasMember("share_pct") ||
        !g["share_pct"].IsNumber()) {
      *error = "a " + std::string(what.item) + " without a \"name\" string and a \"share_pct\" number";
      return false;
    }
    out->groups.push_back({g["name"].GetString(), g["share_pct"].GetDouble()});
  }
  return true;
}

}  // namespace jqtrace::result
