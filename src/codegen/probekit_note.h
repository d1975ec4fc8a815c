// The asm that writes a probe's `.note.probekit` entry: what .note.stapsdt
// cannot carry (argument names, types, the doc comment). Layout, version 1
// (docs/note-probekit.md):
//
//   note name "probekit", type 1 (kNoteTypeProbe)
//   u8 version = 1, u8 nargs, u16 flags = 0
//   provider\0 name\0
//   nargs x { u8 kind, i8 sdt_size (0 if untyped), arg_name\0, type_as_written\0 }
//   doc\0
//
// The entry is top-level asm in every unit that includes the header, in a
// COMDAT group named after the probe and guarded by an assembler symbol, so
// each linked object holds it once however many units describe the probe.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/text.h"
#include "spec/ast.h"

namespace probekit::codegen {

inline constexpr uint32_t kNoteTypeProbe = 1;
inline constexpr uint8_t kNoteVersion = 1;

// The kind byte of each argument.
uint8_t note_kind(spec::ArgKind k);

// The sdt size of a typed argument, as C text for the marker and the note:
// "-4", "8", or PROBEKIT_SDT_CHAR for plain char; "0" when untyped.
std::string sdt_size_text(const spec::Arg& a);

// The C macros that spell a probe's entry as basic asm: emitted once per
// header, guarded, so each probe's entry is a short macro call.
std::string probekit_note_macros();

// Writes a C expression (string literals) for one probe's entry, using those macros.
void probekit_note_entry(Text& out, const std::string& provider, const spec::Probe& probe);

}  // namespace probekit::codegen
