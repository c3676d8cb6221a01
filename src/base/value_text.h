// ValueText: property values, names and index definitions as one line of
// text, for the dump
// of a graph's files (src/dump.h) and for messages. The text is typed and
// unambiguous, so two values print alike only if they are equal:
//
//   null   true   42   42.0   -0.0   1e+300   "Ada \"A\"\n"   x'00ff'   f32[1.5, -2.0]
//   str["math", "poet"]
//
// An int64 has no decimal point; a double always has one or an exponent
// (shortest round-trip digits, std::to_chars). A string is quoted, with
// \" \\ \n \r \t, \xNN for other control bytes and DEL, and \xNN for every
// byte of 0x80 and above when the string is not valid UTF-8 (valid UTF-8
// is printed as is). Bytes are hex in x'...'; a float vector lists its
// floats as f32[...], each printed like a double; a string list lists its
// elements as str[...], each quoted like a string. A name (a label, edge
// type, property key or index name) prints bare when it is an identifier
// (a letter or '_', then letters, digits and '_'; ASCII), else quoted.
//
// An index definition prints as "<name>: <kind> on <vertices|edges>
// :<label> (<keys>), type <type>", the keys and type left out when the
// spec has none (an edge-endpoint constraint).
//
// Thread safety: free functions of their arguments.
#ifndef QUIVER_BASE_VALUE_TEXT_H_
#define QUIVER_BASE_VALUE_TEXT_H_

#include <string>
#include <string_view>

#include "quiver/index.h"
#include "quiver/value.h"

namespace quiver::base {

// Appends `s` quoted and escaped as the top of this file says.
void AppendQuoted(std::string& out, std::string_view s);
// `s` quoted and escaped.
std::string Quoted(std::string_view s);
// `s` (a message that may quote names from a damaged file) as one line of
// text: escaped as Quoted escapes, without the surrounding quotes.
std::string OneLine(std::string_view s);

// Appends `name` bare or quoted, as the top of this file says.
void AppendName(std::string& out, std::string_view name);

// Appends `spec` as the top of this file says.
void AppendIndexSpec(std::string& out, const IndexSpec& spec);

// Appends the text of `v`.
void AppendValueText(std::string& out, const PropertyValue& v);
std::string ValueText(const PropertyValue& v);

}  // namespace quiver::base

#endif  // QUIVER_BASE_VALUE_TEXT_H_
