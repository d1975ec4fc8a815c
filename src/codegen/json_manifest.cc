#include "codegen/json_manifest.h"

#include <nlohmann/json.hpp>

#include "spec/names.h"

namespace probekit::codegen {

std::string json_manifest(const spec::Spec& spec) {
    using nlohmann::json;
    json providers = json::array();
    for (const auto& prov : spec.providers) {
        json probes = json::array();
        for (const auto& p : prov.probes) {
            json args = json::array();
            for (size_t i = 0; i < p.args.size(); ++i) {
                const auto& a = p.args[i];
                json arg = {{"index", i},
                            {"name", a.name},
                            {"type", a.type.spelling()},
                            {"kind", spec::kind_name(a.resolved.kind)},
                            {"c_type", a.resolved.c_type},
                            {"size", a.resolved.size}};
                if (!a.resolved.pointee.empty()) arg["pointee"] = a.resolved.pointee;
                args.push_back(std::move(arg));
            }
            probes.push_back({{"name", p.name},
                              {"display_name", spec::display_name(p.name)},
                              {"macro", spec::macro_name(prov.name, p.name)},
                              {"semaphore", spec::semaphore_name(prov.name, p.name)},
                              {"doc", p.doc},
                              {"line", p.loc.line},
                              {"args", std::move(args)}});
        }
        providers.push_back({{"name", prov.name}, {"line", prov.loc.line}, {"probes", std::move(probes)}});
    }
    json pragmas = json::array();
    for (const auto& p : spec.pragmas) pragmas.push_back({{"text", p.text}, {"line", p.loc.line}});
    json doc = {{"probekit_manifest", 1}, {"spec", spec.path}, {"providers", std::move(providers)}, {"pragmas", std::move(pragmas)}};
    return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace probekit::codegen
