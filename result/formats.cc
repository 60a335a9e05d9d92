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
    {Format::table, "table", ".txt"}, {Format::csv, "csv", ".csv"},     {Format::tsv, "tsv", ".tsv"},
    {Format::json, "json", ".json"},  {Format::md, "md", ".md"},        {Format::trace, "trace", ""},
    {Format::compact, "compact", ""}, {Format::svg, "svg", ".svg"},     {Format::png, "png", ".png"},
    {Format::html, "html", ".html"},
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

std::string_view extension_of(std::string_view path) {
  std::size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  return name.substr(dot);
}

std::optional<Format> format_of_path(std::string_view path) {
  std::string_view ext = extension_of(path);
  if (ext.empty()) return std::nullopt;
  for (const FormatInfo& info : kFormats)
    if (*info.extension && ext == info.extension) return info.format;
  return std::nullopt;
}

std::string extension_list(const std::vector<Format>& formats) {
  std::vector<std::string> extensions;
  for (Format f : formats)
    for (const FormatInfo& info : kFormats)
      if (info.format == f && *info.extension) extensions.push_back(info.extension);
  return fmt::format("{}", fmt::join(extensions, " "));
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
