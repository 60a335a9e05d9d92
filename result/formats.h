#pragma once
// The output formats, declared once: their names (--format), the file extensions that
// choose them for -o, and the renderer each uses for a result document.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model.h"
#include "render.h"

namespace jqtrace::result {

enum class Format { table, csv, tsv, json, md, trace, compact, svg, png, html };

/// Every format a result document renders to (the analysis commands offer these).
extern const std::vector<Format> kDocumentFormats;

const char* format_name(Format f);
/// "table", "csv", ...; nullopt for anything else.
std::optional<Format> parse_format(std::string_view name);
/// The format a path's extension names (".json", ".csv", ".tsv", ".md", ".svg", ".png",
/// ".html", and ".txt" a table), nullopt for any other extension or none.
std::optional<Format> format_of_path(std::string_view path);
/// The path's extension (".xlsx"), "" when its name has none (a leading dot is a hidden
/// file's name, not an extension).
std::string_view extension_of(std::string_view path);
/// ".csv .tsv": the extensions that choose these formats.
std::string extension_list(const std::vector<Format>& formats);
/// "table|csv|tsv|json|md".
std::string format_list(const std::vector<Format>& formats);

/// doc in a document format (table, csv, tsv, json, md).
std::string render(const Document& doc, Format format, const RenderOptions& options);
/// The same handed to sink: CSV, TSV and JSON a piece at a time as they are made (their
/// rows can be many and wide), the formats for people whole.
void render_to(const Document& doc, Format format, const RenderOptions& options, const TextSink& sink);

}  // namespace jqtrace::result
