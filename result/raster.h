#pragma once
// SVG to PNG, for pictures people paste into pull requests and chats: librsvg draws the
// same SVG the svg format writes. librsvg (and cairo, glib, pango below it) is opened only
// when a PNG is asked for, so no other command pays for loading it.
#include <functional>
#include <string>
#include <string_view>

namespace jqtrace::result {

/// Where PNG bytes go, a piece at a time.
using ByteSink = std::function<void(const unsigned char* data, std::size_t size)>;

/// Draws svg at its own size (its width and height in pixels) on a transparent canvas and
/// hands the PNG to sink. False with *error set when librsvg cannot be loaded, the SVG
/// cannot be read, or the picture is too large for one image.
bool svg_to_png(std::string_view svg, const ByteSink& sink, std::string* error);

}  // namespace jqtrace::result
