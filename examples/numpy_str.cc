#include "examples/numpy_str.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace spmd {
namespace {

// NumPy's print options we reproduce (np.get_printoptions() defaults).
constexpr std::size_t kLineWidth = 75;
constexpr int kPrecision = 8;

// ---- Digits of one float ----------------------------------------------------------------------

// std::to_chars gives shortest round-trip digits for the value's own type, as NumPy's Dragon4
// "unique" mode does; `precision` < 0 asks for the shortest.
template <class F>
std::string chars(F value, std::chars_format format, int precision = -1) {
  char buffer[512];
  const auto result = precision < 0
                          ? std::to_chars(buffer, buffer + sizeof buffer, value, format)
                          : std::to_chars(buffer, buffer + sizeof buffer, value, format, precision);
  return std::string(buffer, result.ptr);
}

std::size_t fraction_digits(std::string_view mantissa) {
  const std::size_t point = mantissa.find('.');
  return point == std::string_view::npos ? 0 : mantissa.size() - point - 1;
}

std::string trim_trailing_zeros(std::string text) {
  if (text.find('.') == std::string::npos) return text;
  while (text.back() == '0') text.pop_back();
  return text;
}

// Shortest digits, but at most kPrecision after the point (rounded), as Dragon4 with a cutoff.
template <class F>
std::string capped(F value, std::chars_format format) {
  std::string text = chars(value, format);
  const std::size_t e = text.find('e');
  const std::string_view mantissa = std::string_view(text).substr(0, e);
  if (fraction_digits(mantissa) <= static_cast<std::size_t>(kPrecision)) return text;
  text = chars(value, format, kPrecision);
  const std::size_t e2 = text.find('e');
  if (e2 == std::string::npos) return trim_trailing_zeros(text);
  return trim_trailing_zeros(text.substr(0, e2)) + text.substr(e2);
}

// "12.5" -> {"12", "5"}; "42" -> {"42", ""} (NumPy then prints "42.").
struct Parts {
  std::string integer;
  std::string fraction;
  std::string exponent;  // "-05", empty in positional notation
};

Parts split_parts(const std::string& text) {
  Parts parts;
  const std::size_t e = text.find('e');
  const std::string mantissa = text.substr(0, e);
  if (e != std::string::npos) parts.exponent = text.substr(e + 1);
  const std::size_t point = mantissa.find('.');
  parts.integer = mantissa.substr(0, point);
  if (point != std::string::npos) parts.fraction = mantissa.substr(point + 1);
  return parts;
}

std::string pad_left(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string pad_right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

// ---- Element formats (NumPy's FloatingFormat / IntegerFormat / BoolFormat)
// -----------------------

using ElementFormat = std::function<std::string(std::int64_t index)>;

template <class F>
std::vector<F> float_values(const Array& array) {
  std::vector<F> values;
  for (std::int64_t i = 0; i < array.size(); ++i) {
    values.push_back(static_cast<F>(array.element_as_double(i)));
  }
  return values;
}

// NumPy switches to scientific notation when nonzero magnitudes reach 1e8, go below 1e-4, or
// span more than a factor 1e3.
template <class F>
bool needs_exponent(const std::vector<F>& values) {
  double smallest = INFINITY, largest = 0;
  for (F v : values) {
    if (!std::isfinite(v) || v == 0) continue;
    smallest = std::min(smallest, std::fabs(static_cast<double>(v)));
    largest = std::max(largest, std::fabs(static_cast<double>(v)));
  }
  if (largest == 0) return false;
  return largest >= 1e8 || smallest < 1e-4 || largest / smallest > 1e3;
}

std::string non_finite(double v) { return std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf"); }

// Positional: integer parts right-aligned, fractions left-aligned, padded with spaces.
template <class F>
ElementFormat positional_format(const std::vector<F>& values) {
  std::vector<Parts> parts;
  std::size_t left = 0, right = 0;
  for (F v : values) {
    parts.push_back(std::isfinite(v) ? split_parts(capped(v, std::chars_format::fixed)) : Parts{});
    left = std::max(left, parts.back().integer.size());
    right = std::max(right, parts.back().fraction.size());
  }
  for (F v : values) {  // "nan" / "inf" may be wider than the digits; NumPy widens the integer part
    const std::size_t length = std::isfinite(v) ? 0 : non_finite(v).size();
    if (length > right + 1) left = std::max(left, length - right - 1);
  }
  return [values, parts, left, right](std::int64_t i) {
    const auto k = static_cast<std::size_t>(i);
    if (!std::isfinite(values[k])) return pad_left(non_finite(values[k]), left + right + 1);
    return pad_left(parts[k].integer, left) + "." + pad_right(parts[k].fraction, right);
  };
}

// Scientific: every mantissa gets the longest fraction's digit count (more true digits, not
// zeros), exponents share one width.
template <class F>
ElementFormat scientific_format(const std::vector<F>& values) {
  std::size_t digits = 0, exponent_width = 0, left = 0;
  for (F v : values) {
    if (!std::isfinite(v)) continue;
    const Parts parts = split_parts(capped(v, std::chars_format::scientific));
    digits = std::max(digits, parts.fraction.size());
    exponent_width = std::max(exponent_width, parts.exponent.size() - 1);
    left = std::max(left, parts.integer.size());
  }
  const std::size_t width = left + 1 + digits + 2 + exponent_width;  // "d" "." digits "e-" exp
  std::vector<std::string> texts;
  for (F v : values) {
    if (!std::isfinite(v)) {
      texts.push_back(pad_left(non_finite(v), width));
      continue;
    }
    const Parts parts =
        split_parts(chars(v, std::chars_format::scientific, static_cast<int>(digits)));
    const std::string magnitude = parts.exponent.substr(1);
    texts.push_back(pad_left(parts.integer, left) + "." + parts.fraction + "e" + parts.exponent[0] +
                    std::string(exponent_width - magnitude.size(), '0') + magnitude);
  }
  return [texts](std::int64_t i) { return texts[static_cast<std::size_t>(i)]; };
}

template <class F>
ElementFormat float_format(const Array& array) {
  const std::vector<F> values = float_values<F>(array);
  return needs_exponent(values) ? scientific_format(values) : positional_format(values);
}

ElementFormat integer_format(const Array& array) {
  std::vector<std::string> texts;
  std::size_t width = 0;
  for (std::int64_t i = 0; i < array.size(); ++i) {
    texts.push_back(fmt::format("{}", static_cast<std::int64_t>(array.element_as_double(i))));
    width = std::max(width, texts.back().size());
  }
  return [texts, width](std::int64_t i) {
    return pad_left(texts[static_cast<std::size_t>(i)], width);
  };
}

// NumPy pads True to False's width in every array (rank 0 prints as a scalar instead).
ElementFormat bool_format(const Array& array) {
  return [array](std::int64_t i) {
    return array.element_as_double(i) != 0 ? std::string(" True") : std::string("False");
  };
}

ElementFormat element_format(const Array& array) {
  if (array.dtype() == DType::float64) return float_format<double>(array);
  if (is_floating(array.dtype())) return float_format<float>(array);
  if (array.dtype() == DType::bool_) return bool_format(array);
  return integer_format(array);
}

// ---- Layout (NumPy's _formatArray with separator ' ', no summarization)
// --------------------------

// Appends `word` to `line`, first moving to a new line when it would pass `width`, unless the
// line holds nothing but its indent (wrapping would not help).
void extend_line(std::string& out, std::string& line, const std::string& word, std::size_t width,
                 const std::string& indent) {
  if (line.size() + word.size() > width && line.size() > indent.size()) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    line = indent;
  }
  line += word;
}

class Layout {
 public:
  Layout(const Array& array, ElementFormat format)
      : shape_(array.shape()), format_(std::move(format)) {}

  std::string str() { return recurse(0, 0, " ", kLineWidth); }

 private:
  std::int64_t stride(int axis) const {
    std::int64_t s = 1;
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape_.size(); ++d) s *= shape_[d];
    return s;
  }

  // The block at `axis` starting at flat element `offset`.
  std::string recurse(int axis, std::int64_t offset, const std::string& indent, std::size_t width) {
    const std::string next_indent = indent + " ";
    const std::size_t next_width = width - 1;  // room for this level's ']'
    const std::int64_t count = shape_[static_cast<std::size_t>(axis)];
    const std::int64_t step = stride(axis);
    const bool last_axis = axis + 1 == static_cast<int>(shape_.size());
    std::string out;
    if (last_axis) {
      std::string line = indent;
      for (std::int64_t i = 0; i < count; ++i) {
        extend_line(out, line, format_(offset + i), width - 1, indent);
        if (i + 1 < count) line += " ";
      }
      out += line;
    } else {
      const std::string row_break(static_cast<std::size_t>(shape_.size()) - axis - 1, '\n');
      for (std::int64_t i = 0; i < count; ++i) {
        out += indent + recurse(axis + 1, offset + i * step, next_indent, next_width);
        if (i + 1 < count) out += row_break;
      }
    }
    return "[" + out.substr(indent.size()) + "]";
  }

  Shape shape_;
  ElementFormat format_;
};

// A NumPy float scalar's str(), like Python's float repr: positional between 1e-4 and 1e16
// ("42.0", "0.16666667"), scientific outside ("1e-05").
template <class F>
std::string scalar_repr(F value) {
  if (!std::isfinite(value)) return non_finite(value);
  const F magnitude = std::fabs(value);
  if (value != 0 && (magnitude < F(1e-4) || magnitude >= F(1e16))) {
    return chars(value, std::chars_format::scientific);
  }
  const std::string text = chars(value, std::chars_format::fixed);
  return text.find('.') == std::string::npos ? text + ".0" : text;
}

}  // namespace

std::string numpy_scalar_str(float value) { return scalar_repr(value); }

std::string numpy_str(const Array& array) {
  if (array.rank() == 0) {
    if (array.dtype() == DType::bool_) return array.element_as_double(0) != 0 ? "True" : "False";
    if (is_integer(array.dtype())) {
      return fmt::format("{}", static_cast<std::int64_t>(array.element_as_double(0)));
    }
    if (array.dtype() == DType::float64) return scalar_repr(array.element_as_double(0));
    return scalar_repr(static_cast<float>(array.element_as_double(0)));
  }
  if (array.size() == 0) return "[]";
  return Layout(array, element_format(array)).str();
}

}  // namespace spmd
