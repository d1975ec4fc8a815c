// Every real provider file in the shared corpus must load without error.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <algorithm>

#include "spec/load.h"

using namespace probekit;

TEST_CASE("corpus: every real provider file loads") {
    const std::string dir = PROBEKIT_CORPUS_DIR;
    DIR* d = opendir(dir.c_str());
    if (!d) {
        WARN("corpus directory " << dir << " is missing; skipping");
        return;
    }
    std::vector<std::string> files;
    while (auto* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 2 && (n.rfind(".d") == n.size() - 2 || n.find(".d.") != std::string::npos)) files.push_back(n);
    }
    closedir(d);
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= 48);
    size_t probes = 0;
    for (const auto& f : files) {
        INFO(f);
        spec::Diagnostics diags;
        auto spec = spec::load_file(dir + "/" + f, {}, diags);
        INFO(diags.format_all());
        REQUIRE(spec);
        for (const auto& p : spec->providers) probes += p.probes.size();
    }
    // The corpus report counts 2,364 probes; the Ruby file's two probes under
    // `#if VM_COLLECT_USAGE_DETAILS` are read too, as SystemTap does without -C.
    CHECK(probes == 2364);
}
