#pragma once
// Small writers shared by the renderers: RFC 4180 fields and a JSON document builder.
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

namespace jqtrace::cli {

/// One CSV/TSV field, quoted per RFC 4180 when it holds the separator, a quote or a line end.
std::string delimited_field(std::string_view text, char separator);

/// A JSON document built in memory (outputs are summaries: bounded in size).
class JsonDocument {
 public:
  JsonDocument() : writer_(buffer_) { writer_.SetIndent(' ', 2); }
  rapidjson::PrettyWriter<rapidjson::StringBuffer>& w() { return writer_; }
  void key(std::string_view k) { writer_.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); }
  void string(std::string_view v) { writer_.String(v.data(), static_cast<rapidjson::SizeType>(v.size())); }
  void field(std::string_view k, std::string_view v) { key(k), string(v); }
  void field(std::string_view k, const char* v) { key(k), string(v); }
  void field(std::string_view k, uint64_t v) { key(k), writer_.Uint64(v); }
  void field(std::string_view k, bool v) { key(k), writer_.Bool(v); }
  std::string str() const { return std::string(buffer_.GetString(), buffer_.GetSize()) + "\n"; }

 private:
  rapidjson::StringBuffer buffer_;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer_;
};

}  // namespace jqtrace::cli
