#include "raster.h"

#include <dlfcn.h>

#include <cmath>

#include <cairo.h>
#include <librsvg/rsvg.h>

#include <fmt/core.h>

namespace jqtrace::result {
namespace {

/// The few librsvg, cairo and glib functions a PNG needs, each as (member, symbol): listed
/// once, for the struct that holds them and for the lookup that fills it.
#define JQTRACE_RSVG_FUNCTIONS(X)                                 \
  X(new_from_data, rsvg_handle_new_from_data)                     \
  X(size_in_pixels, rsvg_handle_get_intrinsic_size_in_pixels)     \
  X(render_document, rsvg_handle_render_document)                 \
  X(object_unref, g_object_unref)                                 \
  X(error_free, g_error_free)                                     \
  X(surface_create, cairo_image_surface_create)                   \
  X(surface_status, cairo_surface_status)                         \
  X(surface_destroy, cairo_surface_destroy)                       \
  X(create, cairo_create)                                         \
  X(status, cairo_status)                                         \
  X(destroy, cairo_destroy)                                       \
  X(write_png, cairo_surface_write_to_png_stream)                 \
  X(status_text, cairo_status_to_string)

/// Those functions, found in the libraries at run time (the headers give their types, so a
/// changed signature fails to compile).
struct RsvgApi {
#define JQTRACE_RSVG_MEMBER(member, symbol) decltype(&symbol) member = nullptr;
  JQTRACE_RSVG_FUNCTIONS(JQTRACE_RSVG_MEMBER)
#undef JQTRACE_RSVG_MEMBER
  std::string missing;  ///< why it could not be loaded; empty when it was
};

template <typename F>
void find(void* library, const char* name, F* f, std::string* missing) {
  *f = reinterpret_cast<F>(dlsym(library, name));
  if (!*f && missing->empty()) *missing = fmt::format("{} is missing from librsvg", name);
}

RsvgApi load_api() {
  RsvgApi api;
  // librsvg links cairo and glib, so one handle finds all three (RTLD_GLOBAL for its own use).
  void* library = dlopen("librsvg-2.so.2", RTLD_NOW | RTLD_GLOBAL);
  if (!library) {
    api.missing = fmt::format("PNG output needs librsvg (Debian: apt-get install librsvg2-2): {}", dlerror());
    return api;
  }
#define JQTRACE_RSVG_FIND(member, symbol) find(library, #symbol, &api.member, &api.missing);
  JQTRACE_RSVG_FUNCTIONS(JQTRACE_RSVG_FIND)
#undef JQTRACE_RSVG_FIND
  return api;
}

const RsvgApi& api() {
  static const RsvgApi loaded = load_api();  // once, and only when a PNG is asked for
  return loaded;
}

cairo_status_t write_to_sink(void* closure, const unsigned char* data, unsigned int length) {
  (*static_cast<const ByteSink*>(closure))(data, length);
  return CAIRO_STATUS_SUCCESS;
}

/// A GError's message, freed.
std::string take_message(const RsvgApi& a, GError* error) {
  if (!error) return "unknown error";
  std::string text = error->message ? error->message : "unknown error";
  a.error_free(error);
  return text;
}

}  // namespace

// Sanitizer builds (CI's): fontconfig, pango and glib keep their caches until the process
// ends, by design, and LeakSanitizer would call each a leak of every command that drew a
// PNG. Their allocations, and only theirs, are not reported (LeakSanitizer reads this hook).
#if defined(__SANITIZE_ADDRESS__)
#define JQTRACE_LSAN_HOOK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JQTRACE_LSAN_HOOK 1
#endif
#endif
#ifdef JQTRACE_LSAN_HOOK
extern "C" const char* __lsan_default_suppressions() {  // NOLINT(bugprone-reserved-identifier)
  return "leak:libfontconfig.so\nleak:libpango\nleak:libglib-2.0.so\nleak:libgobject-2.0.so\nleak:librsvg-2.so\n"
         "leak:libcairo.so\nleak:libharfbuzz.so\nleak:libfreetype.so\n";
}
// ...and without a "Suppressions used" table on stderr after each picture.
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }  // NOLINT(bugprone-reserved-identifier)
#endif

bool svg_to_png(std::string_view svg, const ByteSink& sink, std::string* error) {
  const RsvgApi& a = api();
  if (!a.missing.empty()) return *error = a.missing, false;
  GError* failure = nullptr;
  RsvgHandle* handle = a.new_from_data(reinterpret_cast<const guint8*>(svg.data()), svg.size(), &failure);
  if (!handle) return *error = "librsvg cannot read the SVG: " + take_message(a, failure), false;
  double width = 0, height = 0;
  bool sized = a.size_in_pixels(handle, &width, &height);
  constexpr double kMaxSide = 32767;  // cairo's largest image side
  if (!sized || !(width >= 1 && height >= 1 && width <= kMaxSide && height <= kMaxSide)) {
    a.object_unref(handle);
    *error = fmt::format("the picture is {:.0f} x {:.0f} px: a PNG side must be 1 to {:.0f} px (--width sets it)", width,
                         height, kMaxSide);
    return false;
  }
  cairo_surface_t* surface =
      a.surface_create(CAIRO_FORMAT_ARGB32, static_cast<int>(std::ceil(width)), static_cast<int>(std::ceil(height)));
  if (cairo_status_t made = a.surface_status(surface); made != CAIRO_STATUS_SUCCESS) {  // out of memory, too large
    a.surface_destroy(surface);
    a.object_unref(handle);
    *error = fmt::format("cairo: {}", a.status_text(made));
    return false;
  }
  cairo_t* cr = a.create(surface);
  RsvgRectangle viewport{0, 0, width, height};
  bool drawn = a.render_document(handle, cr, &viewport, &failure);
  std::string why = drawn ? "" : "librsvg cannot draw the SVG: " + take_message(a, failure);
  cairo_status_t status = drawn ? a.status(cr) : CAIRO_STATUS_SUCCESS;
  if (drawn && status == CAIRO_STATUS_SUCCESS) status = a.write_png(surface, write_to_sink, const_cast<ByteSink*>(&sink));
  if (why.empty() && status != CAIRO_STATUS_SUCCESS) why = fmt::format("cairo: {}", a.status_text(status));
  a.destroy(cr);
  a.surface_destroy(surface);
  a.object_unref(handle);
  if (!why.empty()) *error = why;
  return why.empty();
}

}  // namespace jqtrace::result
