#include "spec/sema.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

#include "spec/names.h"

namespace probekit::spec {
namespace {

// What claim() below is called with for each probe.
constexpr size_t kNamesPerProbe = 7;

std::string where(const Location& l) { return l.file.str() + ":" + std::to_string(l.line); }

// Resolved types by spelling: a large spec repeats a handful of types
// thousands of times. Only results that reported nothing are kept, so every
// occurrence of a bad type still gets its own diagnostic.
using TypeCache = std::unordered_map<std::string, ResolvedType>;

void check_probe(const Provider& prov, Probe& p, const AliasTable& aliases, TypeCache& types, Diagnostics& diags) {
    if (p.args.size() > kMaxProbeArgs)
        diags.error(p.loc, "probe '" + prov.name + ":" + p.name + "' has " + std::to_string(p.args.size()) +
                               " arguments; at most " + std::to_string(kMaxProbeArgs) +
                               " are supported (the limit of sys/sdt.h and of libbpf's USDT reader)");
    for (auto& a : p.args) {
        std::string spelling = a.type.spelling();
        if (auto it = types.find(spelling); it != types.end()) {
            a.resolved = it->second;
        } else {
            const size_t reported = diags.all().size();
            a.resolved = resolve_type(a.type, aliases, diags);
            if (diags.all().size() == reported) types.emplace(std::move(spelling), a.resolved);
        }
        auto same_name = [&](const Arg& b) { return b.name == a.name; };
        if (!a.name.empty() && std::any_of(p.args.data(), &a, same_name))
            diags.warning(a.loc, "argument name '" + a.name + "' is used twice in probe '" + p.name + "'");
    }
    // The translated list only documents a D translator; its types are not
    // checked (they may use D-only types), only parsed.
}

}  // namespace

void check(Spec& spec, const AliasTable& aliases, Diagnostics& diags) {
    struct Owner {
        const Provider* provider;
        const Probe* probe;
        std::string id() const { return provider->name + ":" + probe->name; }
    };
    size_t probe_count = 0;
    for (const auto& prov : spec.providers) probe_count += prov.probes.size();
    // Generated name -> owner. Hashed: thousands of probes give tens of
    // thousands of names that share long prefixes, slow to order.
    std::unordered_map<std::string, Owner> symbols;
    symbols.reserve(probe_count * kNamesPerProbe);
    auto claim = [&](std::string&& symbol, const Owner& owner) {
        auto [it, fresh] = symbols.try_emplace(std::move(symbol), owner);  // `symbol` is kept when not inserted
        if (!fresh && it->second.probe != owner.probe)
            diags.error(owner.probe->loc, std::string("'") + owner.id() + "' and '" + it->second.id() + "' (" +
                                              where(it->second.probe->loc) + ") both generate '" + it->first +
                                              "'; rename one of them");
    };
    TypeCache types;
    std::map<std::string, const Provider*> providers;
    for (auto& prov : spec.providers) {
        if (auto [it, fresh] = providers.emplace(prov.name, &prov); !fresh)
            diags.error(prov.loc, "provider '" + prov.name + "' is declared twice (first at " + where(it->second->loc) + ")");
        std::unordered_map<std::string_view, const Probe*> probes;
        probes.reserve(prov.probes.size());
        for (auto& p : prov.probes) {
            if (auto [it, fresh] = probes.emplace(p.name, &p); !fresh) {
                diags.error(p.loc, "probe '" + p.name + "' is declared twice in provider '" + prov.name +
                                       "' (first at " + where(it->second->loc) + ")");
                continue;
            }
            check_probe(prov, p, aliases, types, diags);
            const Owner owner{&prov, &p};
            const std::string macro = macro_name(prov.name, p.name);
            const std::string internal = internal_name(prov.name, p.name);
            std::string generated[kNamesPerProbe] = {macro, macro + "_ENABLED", macro + "_GATED",
                                                     semaphore_name(prov.name, p.name), internal, internal + "_slow",
                                                     meta_macro_name(prov.name, p.name)};
            // All but the last (the metadata macro, PROBEKIT_META_ by design)
            // must stay clear of probekit's own names.
            for (size_t i = 0; i + 1 < kNamesPerProbe; ++i) {
                if (is_reserved_name(generated[i])) {
                    diags.error(p.loc, std::string("'") + owner.id() + "' would generate '" + generated[i] +
                                           "', a name reserved by probekit; rename it");
                    break;
                }
            }
            for (std::string& symbol : generated) claim(std::move(symbol), owner);
        }
    }
}

}  // namespace probekit::spec
