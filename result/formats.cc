#include "formats.h"

#include <fmt/format.h>

namespace jqtrace::result {
namespace {

struct FormatInfo {
  Format format;
  const char* name;
  const char* extension;  ///< "" when no file extension chooses it
};

constexpr FormatInfo kFormats[] = {
    {Format::table, "table", ""},   {Format::csv, "csv", ".csv"},     {Format::tsv, "tsv", ".tsv"},
    {Format::json, "json", ".json"}, {Format::md, "md", ".md"},        {Format::trace, "trace", ""},
    {Format::compact, "compact", ""}, {Format::svg, "svg", ".svg"},   {Format::html, "html", ".html"},
};

}  // namespace

const std::vector<Format> kDocumentFormats = {Format::table, Format::csv, Format::tsv, Format::json, Format::md};

const char* format_name(Format f) {
  for (const FormatInfo& info : kFormats)
    if (info.format == f) return info.name;
  return "?";
}

std::optional<Format> parse_format(std::string_view name) {
  for (const FormatInfo& info : kFormats)
    if (name == info.name) return info.format;
  return std::nullopt;
}

std::optional<Format> format_of_path(std::string_view path) {
  std::size_t dot = path.rfind('.');
  std::size_t slash = path.rfind('/');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return std::nullopt;
  std::string_view ext = path.substr(dot);
  for (const FormatInfo& info : kFormats)
    if (*info.extension && ext == info.extension) return info.format;
  return std::nullopt;
}

std::string format_list(const std::vector<Format>& formats) {
  std::vector<std::string> names;
  for (Format f : formats) names.push_back(format_name(f));
  return fmt::format("{}", fmt::join(names, "|"));
}

std::string render(const Document& doc, Format format, const RenderOptions& options) {
  switch (format) {
    case Format::csv: return render_delimited(doc, ',', options);
    case Format::tsv: return render_delimited(doc, '\t', options);
    case Format::json: return render_json(doc);
    case Format::md: return render_markdown(doc, options);
    default: return render_table(doc, options);
  }
}

void render_to(const Document& doc, Format format, const RenderOptions& options, const TextSink& sink) {
  switch (format) {
    case Format::csv: return render_delimited_to(doc, ',', options, sink);
    case Format::tsv: return render_delimited_to(doc, '\t', options, sink);
    case Format::json: return render_json_to(doc, sink);
    case Format::table: return render_table_to(doc, options, sink);
    case Format::md: return render_markdown_to(doc, options, sink);
    default: sink(render(doc, format, options));
  }
}

}  // namespace jqtrace::result
