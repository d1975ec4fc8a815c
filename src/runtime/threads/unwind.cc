#include "runtime/threads/unwind.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>
#include <unordered_map>
#include <cxxabi.h>
#include <cstdlib>
#include <elfutils/libdwfl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <unistd.h>

#include "runtime/threads/exec_mappings.h"

namespace probekit::threads {

// What symbolizing a pc found, cached across dumps: libdwfl looks symbols up
// by a linear scan of the object's symbol table, and the same few hundred
// return addresses recur in every dump. Cleared when the set of loaded
// objects changes (a pc may then belong to another object).
struct Symbolized {
    std::string function, object, file;
    uint64_t offset = 0, object_offset = 0;
    int line = 0;
    bool has_line = false;
};

// A thread's unwound stack, kept for the next dump: a thread that did not run
// in between (the usual case in a hung process, and for most threads of a
// busy one) has the same registers and the same stack above its stack
// pointer, and libdw's CFI walk is the costliest part of a dump after the
// signals. Keyed by a hash of everything the walk depends on: the registers,
// the copied window and the stack's bounds. A walk that read memory outside
// the copy is not kept.
struct UnwoundStack {
    uint64_t hash = 0;
    uint64_t last_dump = 0;
    std::vector<Dwarf_Addr> pcs;
    std::vector<bool> activation;
    std::string note;
};

struct Unwinder::Impl {
    std::unordered_map<uint64_t, Symbolized> cache;
    std::unordered_map<pid_t, UnwoundStack> stacks;  // by tid
    uint64_t dump = 0;                               // refresh() count
    uint64_t modules_signature = 0;
    // The executable mappings when libdw last read the maps; 0: unknown.
    uint64_t exec_fingerprint = 0;
    Dwfl* dwfl = nullptr;
    bool attached = false;
    const Slot* slot = nullptr;     // being unwound
    bool hit_window_end = false;    // a read fell on the live stack outside the copy
    bool read_process = false;      // a read was served from the process's memory
    char* debuginfo_path = nullptr;
    Dwfl_Callbacks callbacks{};
};

namespace {

using Impl = Unwinder::Impl;

pid_t next_thread(Dwfl*, void*, void**) { return 0; }  // threads are asked for by tid only

bool get_thread(Dwfl*, pid_t tid, void* arg, void** thread_arg) {
    auto* impl = static_cast<Impl*>(arg);
    if (!impl->slot || impl->slot->tid != tid) return false;
    *thread_arg = impl;
    return true;
}

// Stack addresses come from the copy taken in the handler: the live stack has
// moved on. Other addresses (code, data) are read from our own memory with
// process_vm_readv, which fails cleanly on an unmapped address (a dlclosed
// object) instead of faulting.
bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
    auto* impl = static_cast<Impl*>(arg);
    const Slot& s = *impl->slot;
    // Offsets, not end addresses: a garbage address near 2^64 must not wrap
    // into the window.
    if (addr >= s.sp && s.copied >= sizeof(Dwarf_Word) && addr - s.sp <= s.copied - sizeof(Dwarf_Word)) {
        std::memcpy(result, s.window + (addr - s.sp), sizeof(Dwarf_Word));
        return true;
    }
    if ((addr >= s.stack_lo && addr < s.stack_hi) || (addr >= s.sp && addr - s.sp < s.window_size)) {
        impl->hit_window_end = true;
        return false;
    }
    impl->read_process = true;
    struct iovec local = {result, sizeof(Dwarf_Word)};
    struct iovec remote = {reinterpret_cast<void*>(addr), sizeof(Dwarf_Word)};
    return syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL) == sizeof(Dwarf_Word);
}

bool set_initial_registers(Dwfl_Thread* thread, void* thread_arg) {
    auto* impl = static_cast<Impl*>(thread_arg);
#if defined(__x86_64__)
    Dwarf_Word regs[kRegCount];
    for (int i = 0; i < kRegCount; ++i) regs[i] = impl->slot->regs[i];
    if (!dwfl_thread_state_registers(thread, 0, kRegCount, regs)) return false;
    dwfl_thread_state_register_pc(thread, regs[16]);
    return true;
#else
    (void)thread;
    (void)impl;
    return false;
#endif
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    next_thread, get_thread, memory_read, set_initial_registers, nullptr, nullptr,
};

std::string demangle(const char* name) {
    int status = 0;
    char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (!d) return name;
    std::string s(d);
    std::free(d);
    return s;
}

struct FrameWalk {
    std::vector<Dwarf_Addr> pcs;
    std::vector<bool> activation;
};

// The key of UnwoundStack: 8 bytes at a time, about 1 ns each.
uint64_t hash_capture(const Slot& s) {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    auto mix = [&h](uint64_t v) {
        h ^= v;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    };
    for (uint64_t r : s.regs) mix(r);
    mix(s.sp);
    mix(s.copied);
    mix(s.window_size);
    mix(s.stack_lo);  // memory_read refuses the live stack between these
    mix(s.stack_hi);
    size_t i = 0;
    for (; i + 8 <= s.copied; i += 8) {
        uint64_t w;
        std::memcpy(&w, s.window + i, 8);
        mix(w);
    }
    for (; i < s.copied; ++i) mix(s.window[i]);
    return h;
}

int on_frame(Dwfl_Frame* frame, void* arg) {
    auto* walk = static_cast<FrameWalk*>(arg);
    Dwarf_Addr pc = 0;
    bool isactivation = false;
    if (!dwfl_frame_pc(frame, &pc, &isactivation)) return DWARF_CB_ABORT;
    walk->pcs.push_back(pc);
    walk->activation.push_back(isactivation);
    return walk->pcs.size() >= 128 ? DWARF_CB_ABORT : DWARF_CB_OK;
}

}  // namespace

Unwinder::Unwinder() : impl_(std::make_unique<Impl>()) {
    impl_->callbacks.find_elf = dwfl_linux_proc_find_elf;
    impl_->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    impl_->callbacks.debuginfo_path = &impl_->debuginfo_path;
    impl_->dwfl = dwfl_begin(&impl_->callbacks);
}

Unwinder::~Unwinder() {
    if (impl_->dwfl) dwfl_end(impl_->dwfl);
}

bool Unwinder::refresh(std::string* error) {
    // Stacks of threads that were not unwound in the previous dump (exited,
    // or not captured) are dropped: the cache holds one dump's threads.
    ++impl_->dump;
    std::erase_if(impl_->stacks, [&](const auto& e) { return e.second.last_dump + 1 < impl_->dump; });
    if (!impl_->dwfl) {
        *error = std::string("libdw: ") + dwfl_errmsg(-1);
        return false;
    }
    // Taken before the maps are read: an object loaded in between changes the
    // next fingerprint, so it is seen by the next dump at the latest.
    uint64_t fingerprint = 0;
    if (!exec_mappings_fingerprint(&fingerprint)) fingerprint = 0;
    if (impl_->attached && fingerprint != 0 && fingerprint == impl_->exec_fingerprint) return true;
    impl_->exec_fingerprint = 0;
    // /proc/self/maps in as few read() calls as possible (the kernel keeps
    // each call consistent, not the sequence): threads mapping and unmapping
    // meanwhile (stacks, allocators) could otherwise tear an object's
    // segments apart in libdw's view. Then libdw parses the copy.
    std::string maps;
    const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        std::vector<char> buf(1 << 20);
        ssize_t n;
        while ((n = ::read(fd, buf.data(), buf.size())) > 0) maps.append(buf.data(), static_cast<size_t>(n));
        ::close(fd);
    }
    FILE* copy = maps.empty() ? nullptr : fmemopen(maps.data(), maps.size(), "r");
    if (!copy) {
        *error = std::string("cannot read /proc/self/maps: ") + std::strerror(errno);
        return false;
    }
    dwfl_report_begin(impl_->dwfl);
    const int r = dwfl_linux_proc_maps_report(impl_->dwfl, copy);
    dwfl_report_end(impl_->dwfl, nullptr, nullptr);
    std::fclose(copy);
    if (r != 0) {
        *error = std::string("libdw cannot read /proc/self/maps: ") + (r > 0 ? std::strerror(r) : dwfl_errmsg(-1));
        return false;
    }
    // A signature of the loaded objects (name and base of each): when it
    // changes, cached symbols may be stale.
    uint64_t signature = 1469598103934665603ull;
    dwfl_getmodules(
        impl_->dwfl,
        [](Dwfl_Module*, void**, const char* name, Dwarf_Addr base, void* arg) -> int {
            auto* sig = static_cast<uint64_t*>(arg);
            for (const char* c = name ? name : ""; *c; ++c) *sig = (*sig ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
            *sig = (*sig ^ base) * 1099511628211ull;
            return DWARF_CB_OK;
        },
        &signature, 0);
    if (signature != impl_->modules_signature) {
        impl_->cache.clear();
        impl_->stacks.clear();
        impl_->modules_signature = signature;
    }
    if (!impl_->attached) {
        if (!dwfl_attach_state(impl_->dwfl, nullptr, getpid(), &kThreadCallbacks, impl_.get())) {
            *error = std::string("libdw: ") + dwfl_errmsg(-1);
            return false;
        }
        impl_->attached = true;
    }
    impl_->exec_fingerprint = fingerprint;
    return true;
}

std::vector<Frame> Unwinder::unwind(const Slot& slot, bool file_line, std::string* note) {
    std::vector<Frame> frames;
#if !defined(__x86_64__)
    *note = "stack capture is implemented for x86-64 only";
    return frames;
#endif
    const uint64_t hash = hash_capture(slot);
    UnwoundStack& stack = impl_->stacks[slot.tid];
    if (stack.hash != hash || stack.pcs.empty()) {
        impl_->slot = &slot;
        impl_->hit_window_end = false;
        impl_->read_process = false;
        FrameWalk walk;
        const int r = dwfl_getthread_frames(impl_->dwfl, slot.tid, on_frame, &walk);
        impl_->slot = nullptr;
        stack.note.clear();
        if (impl_->hit_window_end)
            stack.note = "stack truncated: the frames above lie beyond the " + std::to_string(slot.window_size / 1024) +
                         " KiB copied";
        else if (r == -1 && walk.pcs.size() <= 1 && dwfl_errno() != 0)
            stack.note = std::string("unwinding stopped: ") + dwfl_errmsg(-1);
        stack.pcs = std::move(walk.pcs);
        stack.activation = std::move(walk.activation);
        // Kept only when the walk depended on the captured bytes alone.
        stack.hash = impl_->read_process ? 0 : hash;
    }
    stack.last_dump = impl_->dump;
    if (!stack.note.empty()) *note = stack.note;
    for (size_t i = 0; i < stack.pcs.size(); ++i) {
        Frame f;
        f.pc = stack.pcs[i];
        // A return address points after the call: look up the call itself.
        const bool activation = stack.activation[i];
        const Dwarf_Addr lookup = activation ? f.pc : f.pc - 1;
        // Keyed by the pc and whether it is a call site (its lookup differs).
        const uint64_t key = f.pc * 2 + (activation ? 1 : 0);
        auto it = impl_->cache.find(key);
        if (it == impl_->cache.end() || (file_line && !it->second.has_line)) {
            Symbolized sym;
            if (Dwfl_Module* mod = dwfl_addrmodule(impl_->dwfl, lookup)) {
                Dwarf_Addr base = 0;
                const char* modname = dwfl_module_info(mod, nullptr, &base, nullptr, nullptr, nullptr, nullptr, nullptr);
                sym.object = modname ? modname : "";
                sym.object_offset = f.pc - base;
                GElf_Off off = 0;
                GElf_Sym elf_sym;
                if (const char* name = dwfl_module_addrinfo(mod, lookup, &off, &elf_sym, nullptr, nullptr, nullptr)) {
                    sym.function = demangle(name);
                    sym.offset = off + (f.pc - lookup);
                }
                if (file_line) {
                    sym.has_line = true;
                    if (Dwfl_Line* line = dwfl_module_getsrc(mod, lookup)) {
                        int lineno = 0;
                        if (const char* src = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)) {
                            sym.file = src;
                            sym.line = lineno;
                        }
                    }
                }
            }
            it = impl_->cache.insert_or_assign(key, std::move(sym)).first;
        }
        const Symbolized& sym = it->second;
        f.function = sym.function;
        f.offset = sym.offset;
        f.object = sym.object;
        f.object_offset = sym.object_offset;
        if (file_line) {
            f.file = sym.file;
            f.line = sym.line;
        }
        frames.push_back(std::move(f));
    }
    return frames;
}

}  // namespace probekit::threads
