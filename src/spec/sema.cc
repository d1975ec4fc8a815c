#include "spec/sema.h"

#include <map>
#include <set>

#include "spec/names.h"

namespace probekit::spec {
namespace {

std::string where(const Location& l) { return l.file + ":" + std::to_string(l.line); }

void check_probe(const Provider& prov, Probe& p, const AliasTable& aliases, Diagnostics& diags) {
    if (p.args.size() > kMaxProbeArgs)
        diags.error(p.loc, "probe '" + prov.name + ":" + p.name + "' has " + std::to_string(p.args.size()) +
                               " arguments; at most " + std::to_string(kMaxProbeArgs) +
                               " are supported (the limit of sys/sdt.h and of libbpf's USDT reader)");
    std::set<std::string> names;
    for (auto& a : p.args) {
        a.resolved = resolve_type(a.type, aliases, diags);
        if (!a.name.empty() && !names.insert(a.name).second)
            diags.warning(a.loc, "argument name '" + a.name + "' is used twice in probe '" + p.name + "'");
    }
    // The translated list only documents a D translator; its types are not
    // checked (they may use D-only types), only parsed.
}

}  // namespace

void check(Spec& spec, const AliasTable& aliases, Diagnostics& diags) {
    std::map<std::string, const Provider*> providers;
    std::map<std::string, std::pair<std::string, Location>> symbols;  // generated name -> owner
    auto claim = [&](const std::string& symbol, const std::string& owner, const Location& loc) {
        auto [it, fresh] = symbols.emplace(symbol, std::make_pair(owner, loc));
        if (!fresh && it->second.first != owner)
            diags.error(loc, "'" + owner + "' and '" + it->second.first + "' (" + where(it->second.second) +
                                 ") both generate '" + symbol + "'; rename one of them");
    };
    for (auto& prov : spec.providers) {
        if (auto [it, fresh] = providers.emplace(prov.name, &prov); !fresh)
            diags.error(prov.loc, "provider '" + prov.name + "' is declared twice (first at " + where(it->second->loc) + ")");
        std::map<std::string, const Probe*> probes;
        for (auto& p : prov.probes) {
            if (auto [it, fresh] = probes.emplace(p.name, &p); !fresh) {
                diags.error(p.loc, "probe '" + p.name + "' is declared twice in provider '" + prov.name +
                                       "' (first at " + where(it->second->loc) + ")");
                continue;
            }
            check_probe(prov, p, aliases, diags);
            const std::string owner = prov.name + ":" + p.name;
            const std::string macro = macro_name(prov.name, p.name);
            const std::string internal = internal_name(prov.name, p.name);
            bool reserved = false;
            for (const std::string& symbol : {macro, macro + "_ENABLED", macro + "_GATED", semaphore_name(prov.name, p.name),
                                              internal, internal + "_slow"}) {
                if (!reserved && is_reserved_name(symbol)) {
                    diags.error(p.loc, "'" + owner + "' would generate '" + symbol + "', a name reserved by probekit; rename it");
                    reserved = true;
                }
                claim(symbol, owner, p.loc);
            }
            claim(meta_macro_name(prov.name, p.name), owner, p.loc);
        }
    }
}

}  // namespace probekit::spec
