/** \file
 * Finds the __thread_local data of the module (executable or shared object) that holds a
 * kernel, so that the emulator can count it in the LDM budget and accept DMA to it.
 *
 * slave.h defines __thread_local as `__thread` placed in section ".tdata_local". GNU ld
 * keeps that section inside the module's TLS segment, right after .tdata, so
 *  - its size (from the module's ELF section headers, read from the file) is exactly the
 *    bytes of all __thread_local variables of the module: on the real machine all of
 *    them occupy every CPE's LDM, whichever kernel runs;
 *  - each thread's copy starts at the thread's TLS block of the module
 *    (dl_phdr_info::dlpi_tls_data) plus (section address - PT_TLS address).
 * Other TLS of the module (plain __thread, C++ thread_local, the emulator's own state)
 * lies in other sections and is not counted. The variables themselves (name, offset, size)
 * come from the module's symbol table, so that a DMA is checked against the extent of the
 * one variable it lands in (only against the whole section if the module is stripped).
 */
#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include "emu_internal.h"

extern "C" void *__tls_get_addr(void *index); // the dynamic linker's (ELF TLS ABI)

namespace athread_emu {

namespace {

const char *kSection = ".tdata_local";

struct ModuleQuery {
    uintptr_t addr;
    bool found = false;
    std::string name;
    uintptr_t tls_vaddr = 0;
    size_t tls_modid = 0;
};

int find_module_cb(struct dl_phdr_info *info, size_t, void *data) {
    auto *q = static_cast<ModuleQuery *>(data);
    bool contains = false;
    const ElfW(Phdr) *tls = nullptr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) &ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD) {
            uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
            if (q->addr >= lo && q->addr < lo + ph.p_memsz)
                contains = true;
        } else if (ph.p_type == PT_TLS) {
            tls = &ph;
        }
    }
    if (!contains)
        return 0;
    q->found = true;
    q->name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
    if (tls) {
        q->tls_vaddr = tls->p_vaddr;
        q->tls_modid = info->dlpi_tls_modid;
    }
    return 1;
}

bool read_at(int fd, void *dst, size_t n, off_t off) {
    return pread(fd, dst, n, off) == static_cast<ssize_t>(n);
}

/** The variables of section `index` (.tdata_local) from the symbol table (.symtab, else
 * .dynsym), so that a DMA can be checked against the one variable it lands in. In a linked
 * module an STT_TLS symbol's st_value is its offset in the module's TLS template (GNU ld
 * and gold); a value that is a virtual address inside the TLS segment (other linkers) is
 * taken relative to the segment. */
void read_symbols(int fd, const std::vector<ElfW(Shdr)> &sh, size_t index, uintptr_t tls_vaddr,
                  TlsLocalInfo &out) {
    for (uint32_t type : {uint32_t(SHT_SYMTAB), uint32_t(SHT_DYNSYM)}) {
        for (const ElfW(Shdr) & tab : sh) {
            if (tab.sh_type != type || tab.sh_entsize != sizeof(ElfW(Sym)) ||
                tab.sh_link >= sh.size())
                continue;
            const ElfW(Shdr) &str = sh[tab.sh_link];
            std::vector<ElfW(Sym)> syms(tab.sh_size / sizeof(ElfW(Sym)));
            std::string strings(str.sh_size, '\0');
            if (syms.empty() ||
                !read_at(fd, syms.data(), syms.size() * sizeof(ElfW(Sym)), tab.sh_offset) ||
                !read_at(fd, &strings[0], strings.size(), str.sh_offset))
                continue;
            const ElfW(Shdr) &sec = sh[index];
            const uintptr_t sec_lo = sec.sh_addr - tls_vaddr, sec_hi = sec_lo + sec.sh_size;
            for (const ElfW(Sym) & sym : syms) {
                if (sym.st_shndx != index || ELF64_ST_TYPE(sym.st_info) != STT_TLS)
                    continue;
                if (sym.st_name >= strings.size())
                    continue;
                uintptr_t off = sym.st_value;
                if (tls_vaddr && off >= tls_vaddr + sec_lo && off < tls_vaddr + sec_hi)
                    off -= tls_vaddr;
                if (off < sec_lo || off + sym.st_size > sec_hi)
                    continue; // not understood: skip
                out.symbols.push_back(
                    {strings.c_str() + sym.st_name, off, static_cast<int64_t>(sym.st_size)});
            }
            if (!out.symbols.empty()) {
                std::sort(out.symbols.begin(), out.symbols.end(),
                          [](const TlsLocalSymbol &a, const TlsLocalSymbol &b) {
                              return a.offset < b.offset;
                          });
                return;
            }
        }
    }
}

/** Reads the section headers of `file`; fills bytes/offset of .tdata_local. */
bool read_section(const std::string &file, uintptr_t tls_vaddr, TlsLocalInfo &out) {
    int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = false;
    ElfW(Ehdr) eh;
    if (read_at(fd, &eh, sizeof eh, 0) && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
        eh.e_shentsize == sizeof(ElfW(Shdr)) && eh.e_shnum > 0 && eh.e_shstrndx < eh.e_shnum) {
        std::vector<ElfW(Shdr)> sh(eh.e_shnum);
        if (read_at(fd, sh.data(), sh.size() * sizeof(ElfW(Shdr)), eh.e_shoff)) {
            const ElfW(Shdr) &strtab = sh[eh.e_shstrndx];
            std::string names(strtab.sh_size, '\0');
            if (read_at(fd, &names[0], names.size(), strtab.sh_offset)) {
                ok = true;
                size_t index = 0; // of .tdata_local; 0: none
                for (size_t i = 0; i < sh.size(); i++) {
                    const ElfW(Shdr) &s = sh[i];
                    if (s.sh_name >= names.size())
                        continue;
                    if (std::strcmp(names.c_str() + s.sh_name, kSection) != 0)
                        continue;
                    if (!(s.sh_flags & SHF_TLS))
                        continue;
                    out.bytes = static_cast<int64_t>(s.sh_size);
                    out.offset = s.sh_addr - tls_vaddr;
                    index = i;
                }
                if (index)
                    read_symbols(fd, sh, index, tls_vaddr, out);
            }
        }
    }
    close(fd);
    return ok;
}

/** The argument of __tls_get_addr (the ELF TLS ABI's tls_index). */
struct TlsIndex {
    unsigned long module, offset;
};

struct TlsBlockQuery {
    size_t modid;
    uintptr_t block = 0;
};

int tls_block_cb(struct dl_phdr_info *info, size_t size, void *data) {
    auto *q = static_cast<TlsBlockQuery *>(data);
    if (size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof(void *))
        return 1;
    if (info->dlpi_tls_modid != q->modid)
        return 0;
    q->block = reinterpret_cast<uintptr_t>(info->dlpi_tls_data);
    return 1;
}

} // namespace

TlsLocalInfo find_tls_local(const void *code) {
    // Called from the host thread only (athread_spawn), hence no lock.
    static std::map<std::string, TlsLocalInfo> cache;
    ModuleQuery q;
    q.addr = reinterpret_cast<uintptr_t>(code);
    dl_iterate_phdr(find_module_cb, &q);
    if (!q.found)
        return TlsLocalInfo{};
    auto it = cache.find(q.name);
    if (it != cache.end())
        return it->second;
    TlsLocalInfo info;
    info.module = q.name;
    info.tls_modid = q.tls_modid;
    if (q.tls_modid == 0) {
        info.known = true; // no TLS segment: no __thread_local data
    } else {
        info.known = read_section(q.name, q.tls_vaddr, info);
        if (!info.known) {
            warn("cannot read the section headers of %s: its __thread_local data is not "
                 "counted in the LDM budget and DMA to it is refused",
                 q.name.c_str());
        }
    }
    cache[q.name] = info;
    return info;
}

uintptr_t thread_tls_block(size_t modid) {
    if (modid == 0)
        return 0;
    TlsBlockQuery q{modid};
    dl_iterate_phdr(tls_block_cb, &q);
    if (!q.block) {
        // A module loaded with dlopen gets its TLS block in a thread at the thread's first use
        // of its TLS: allocate it now (the dynamic linker's own entry point, what compiled code
        // calls), so that other CPEs can reach this CPE's __thread_local data (broadcasts, RMA)
        // before this CPE has touched it.
        TlsIndex index{modid, 0};
        q.block = reinterpret_cast<uintptr_t>(__tls_get_addr(&index));
    }
    return q.block;
}

} // namespace athread_emu
