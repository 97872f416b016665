#include "memory/frame_walk.h"

#include <unwind.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace accel::memory::detail {

namespace {

// ---- the unwinder's walk ----

struct UnwinderWalk {
  void** frames;
  int most;
  int skip;
  int count = 0;
};

_Unwind_Reason_Code collectFrame(_Unwind_Context* context, void* arg) {
  auto* walk = static_cast<UnwinderWalk*>(arg);
  const auto ip = _Unwind_GetIP(context);
  if (ip == 0) return _URC_END_OF_STACK;
  if (walk->skip > 0) {
    --walk->skip;
    return _URC_NO_REASON;
  }
  if (walk->count == walk->most) return _URC_END_OF_STACK;
  walk->frames[walk->count++] = reinterpret_cast<void*>(ip);
  return _URC_NO_REASON;
}

// The addresses from where the caller of this function's caller returns
// to on: the unwinder reports an address in this function first, then where
// it returns to (in its caller), then where that caller returns to (in the
// walkFrames caller's frame), then where that one returns to.
[[gnu::noinline]] int unwinderWalkFromCallersCaller(void** frames, int most) noexcept {
  UnwinderWalk walk{frames, most, 3};
  _Unwind_Backtrace(&collectFrame, &walk);
  return walk.count;
}

#if defined(__x86_64__)

// libgcc's FDE lookup (unwind-dw2-fde.h, exported since GCC 3.0), weak so
// that an unwinder without it leaves the walk to _Unwind_Backtrace.
struct DwarfEhBases {
  void* tbase;
  void* dbase;
  void* func;
};
extern "C" const void* _Unwind_Find_FDE(void* pc, DwarfEhBases* bases)
    __attribute__((weak));

// x86-64's DWARF register numbers.
constexpr unsigned kRbp = 6;
constexpr unsigned kRsp = 7;
constexpr unsigned kReturnAddress = 16;

// ---- one frame's rule, packed in 64 bits ----

enum class Kind : std::uint64_t {
  Empty = 0,    // not worked out (never stored)
  Step = 1,     // the caller's frame follows from the rule
  End = 2,      // the last frame: no unwind information, or no return address
  Unknown = 3,  // a rule this walk does not follow: the unwinder's walk does
};
enum class SavedRbp : std::uint64_t { Same = 0, At = 1, Lost = 2 };

struct Rule {
  Kind kind = Kind::Empty;
  bool cfa_at_rbp =
      false;  // the caller's frame address: rbp + cfa_off, else rsp + cfa_off
  SavedRbp rbp = SavedRbp::Same;
  std::int32_t cfa_off = 0;
  std::int32_t ra_off = 0;   // the return address at CFA + ra_off
  std::int32_t rbp_off = 0;  // the caller's rbp at CFA + rbp_off when At

  [[nodiscard]] std::uint64_t pack() const noexcept {
    return static_cast<std::uint64_t>(kind) | (cfa_at_rbp ? 4u : 0u) |
           (static_cast<std::uint64_t>(rbp) << 3) |
           (static_cast<std::uint64_t>(static_cast<std::uint32_t>(cfa_off) & 0xFFFFFFu)
            << 8) |
           (static_cast<std::uint64_t>(static_cast<std::uint16_t>(ra_off)) << 32) |
           (static_cast<std::uint64_t>(static_cast<std::uint16_t>(rbp_off)) << 48);
  }
  static Rule unpack(std::uint64_t bits) noexcept {
    Rule rule;
    rule.kind = static_cast<Kind>(bits & 3u);
    rule.cfa_at_rbp = (bits & 4u) != 0;
    rule.rbp = static_cast<SavedRbp>((bits >> 3) & 3u);
    // Sign-extend the 24-bit offset.
    rule.cfa_off =
        static_cast<std::int32_t>(static_cast<std::uint32_t>(bits >> 8) << 8) >> 8;
    rule.ra_off = static_cast<std::int16_t>(bits >> 32);
    rule.rbp_off = static_cast<std::int16_t>(bits >> 48);
    return rule;
  }
  // Whether the offsets fit the packing.
  [[nodiscard]] bool packable() const noexcept {
    return cfa_off >= -(1 << 23) && cfa_off < (1 << 23) && ra_off >= -32768 &&
           ra_off < 32768 && rbp_off >= -32768 && rbp_off < 32768;
  }
};

// ---- reading the call-frame information ----

class Reader {
 public:
  Reader(const std::uint8_t* at, const std::uint8_t* end) noexcept : at_(at), end_(end) {}
  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] bool done() const noexcept { return !ok_ || at_ >= end_; }
  [[nodiscard]] const std::uint8_t* at() const noexcept { return at_; }
  void moveTo(const std::uint8_t* at) noexcept {
    if (at > end_) ok_ = false;
    at_ = at;
  }

  template <typename T>
  T fixed() noexcept {
    T value{};
    if (end_ - at_ < static_cast<std::ptrdiff_t>(sizeof(T))) {
      ok_ = false;
      return value;
    }
    std::memcpy(&value, at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::uint64_t uleb() noexcept {
    std::uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (at_ >= end_) break;
      const std::uint8_t byte = *at_++;
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    ok_ = false;
    return value;
  }
  std::int64_t sleb() noexcept {
    std::int64_t value = 0;
    unsigned shift = 0;
    while (shift < 64) {
      if (at_ >= end_) break;
      const std::uint8_t byte = *at_++;
      value |= static_cast<std::int64_t>(byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) == 0) {
        if (shift < 64 && (byte & 0x40) != 0) value |= -(std::int64_t{1} << shift);
        return value;
      }
    }
    ok_ = false;
    return value;
  }
  const char* string() noexcept {
    const auto* begin = reinterpret_cast<const char*>(at_);
    while (at_ < end_ && *at_ != 0) ++at_;
    if (at_ >= end_) {
      ok_ = false;
      return "";
    }
    ++at_;
    return begin;
  }
  // Skips a pointer of DWARF EH encoding `encoding` (its format alone).
  void skipEncoded(std::uint8_t encoding) noexcept {
    switch (encoding & 0x0f) {
      case 0x00:  // absptr
      case 0x04:  // udata8
      case 0x0c:  // sdata8
        moveTo(at_ + 8);
        return;
      case 0x02:
      case 0x0a:
        moveTo(at_ + 2);
        return;
      case 0x03:
      case 0x0b:
        moveTo(at_ + 4);
        return;
      case 0x01:
        (void)uleb();
        return;
      case 0x09:
        (void)sleb();
        return;
      default:
        ok_ = false;
    }
  }

 private:
  const std::uint8_t* at_;
  const std::uint8_t* end_;
  bool ok_ = true;
};

// The rules of the two registers the walk follows, and of the CFA.
struct Row {
  enum class How : std::uint8_t { Same, Offset, Undefined, Other };
  unsigned cfa_reg = kRsp;
  std::int64_t cfa_off = 8;
  bool cfa_other = false;  // an expression, or a register the walk does not follow
  How rbp = How::Same;
  std::int64_t rbp_off = 0;
  How ra = How::Same;
  std::int64_t ra_off = 0;
};

struct Cie {
  std::uint64_t code_align = 1;
  std::int64_t data_align = 1;
  std::uint8_t fde_encoding = 0;
  bool fde_augmented = false;  // 'z': FDEs have augmentation data
  const std::uint8_t* instructions = nullptr;
  const std::uint8_t* end = nullptr;
};

// Reads the CIE at `at`; false when it is one the walk does not follow.
bool readCie(const std::uint8_t* at, Cie& cie) noexcept {
  std::uint32_t length = 0;
  std::memcpy(&length, at, 4);
  if (length == 0 || length == 0xffffffffu) return false;  // 64-bit DWARF: not followed
  Reader read(at + 4, at + 4 + length);
  if (read.fixed<std::uint32_t>() != 0) return false;  // not a CIE
  const std::uint8_t version = read.fixed<std::uint8_t>();
  if (version != 1 && version != 3) return false;
  const char* augmentation = read.string();
  cie.code_align = read.uleb();
  cie.data_align = read.sleb();
  const std::uint64_t ra_register =
      version == 1 ? read.fixed<std::uint8_t>() : read.uleb();
  if (ra_register != kReturnAddress) return false;
  if (augmentation[0] == 'z') {
    cie.fde_augmented = true;
    const std::uint64_t size = read.uleb();
    const std::uint8_t* data_end = read.at() + size;
    for (const char* c = augmentation + 1; *c != 0 && read.ok(); ++c) {
      if (*c == 'R') {
        cie.fde_encoding = read.fixed<std::uint8_t>();
      } else if (*c == 'P') {
        const std::uint8_t encoding = read.fixed<std::uint8_t>();
        read.skipEncoded(encoding);
      } else if (*c == 'L') {
        (void)read.fixed<std::uint8_t>();
      } else {
        // 'S' (a signal frame) or one this walk does not know.
        return false;
      }
    }
    read.moveTo(data_end);
  } else if (augmentation[0] != 0) {
    return false;
  }
  if (!read.ok()) return false;
  cie.instructions = read.at();
  cie.end = at + 4 + length;
  return true;
}

// Runs a call-frame program up to (not including) the rows at or after
// `pc`, from `loc`, as libgcc does for a return address `pc`. False: an
// instruction the walk does not follow.
bool runProgram(Reader read, const Cie& cie, std::uintptr_t pc, std::uintptr_t& loc,
                Row& row, const Row& initial) noexcept {
  constexpr int kStates = 8;
  Row remembered[kStates];
  int depth = 0;
  auto setRule = [&](std::uint64_t reg, Row::How how, std::int64_t off) {
    if (reg == kRbp) {
      row.rbp = how;
      row.rbp_off = off;
    } else if (reg == kReturnAddress) {
      row.ra = how;
      row.ra_off = off;
    }
  };
  auto restore = [&](std::uint64_t reg) {
    if (reg == kRbp) {
      row.rbp = initial.rbp;
      row.rbp_off = initial.rbp_off;
    } else if (reg == kReturnAddress) {
      row.ra = initial.ra;
      row.ra_off = initial.ra_off;
    }
  };
  while (!read.done() && loc < pc) {
    const std::uint8_t op = read.fixed<std::uint8_t>();
    const std::uint8_t high = op & 0xc0;
    const std::uint8_t low = op & 0x3f;
    if (high == 0x40) {  // advance_loc
      loc += low * cie.code_align;
      continue;
    }
    if (high == 0x80) {  // offset
      setRule(low, Row::How::Offset,
              static_cast<std::int64_t>(read.uleb()) * cie.data_align);
      continue;
    }
    if (high == 0xc0) {  // restore
      restore(low);
      continue;
    }
    switch (op) {
      case 0x00:  // nop
        break;
      case 0x02:
        loc += read.fixed<std::uint8_t>() * cie.code_align;
        break;
      case 0x03:
        loc += read.fixed<std::uint16_t>() * cie.code_align;
        break;
      case 0x04:
        loc += read.fixed<std::uint32_t>() * cie.code_align;
        break;
      case 0x05: {  // offset_extended
        const std::uint64_t reg = read.uleb();
        setRule(reg, Row::How::Offset,
                static_cast<std::int64_t>(read.uleb()) * cie.data_align);
        break;
      }
      case 0x06:
        restore(read.uleb());
        break;
      case 0x07:
        setRule(read.uleb(), Row::How::Undefined, 0);
        break;
      case 0x08:
        setRule(read.uleb(), Row::How::Same, 0);
        break;
      case 0x09:    // register
      case 0x14: {  // val_offset
        const std::uint64_t reg = read.uleb();
        (void)read.uleb();
        setRule(reg, Row::How::Other, 0);
        break;
      }
      case 0x0a:
        if (depth == kStates) return false;
        remembered[depth++] = row;
        break;
      case 0x0b:
        // The remembered rules include the CFA's, as libgcc keeps them (a
        // function's code after an epilogue's `ret` has its whole frame).
        if (depth == 0) return false;
        row = remembered[--depth];
        break;
      case 0x0c:  // def_cfa
        row.cfa_reg = static_cast<unsigned>(read.uleb());
        row.cfa_off = static_cast<std::int64_t>(read.uleb());
        row.cfa_other = false;
        break;
      case 0x0d:
        row.cfa_reg = static_cast<unsigned>(read.uleb());
        row.cfa_other = false;
        break;
      case 0x0e:
        row.cfa_off = static_cast<std::int64_t>(read.uleb());
        break;
      case 0x0f: {  // def_cfa_expression
        const std::uint64_t size = read.uleb();
        read.moveTo(read.at() + size);
        row.cfa_other = true;
        break;
      }
      case 0x10:    // expression
      case 0x16: {  // val_expression
        const std::uint64_t reg = read.uleb();
        const std::uint64_t size = read.uleb();
        read.moveTo(read.at() + size);
        setRule(reg, Row::How::Other, 0);
        break;
      }
      case 0x11: {  // offset_extended_sf
        const std::uint64_t reg = read.uleb();
        setRule(reg, Row::How::Offset, read.sleb() * cie.data_align);
        break;
      }
      case 0x12:  // def_cfa_sf
        row.cfa_reg = static_cast<unsigned>(read.uleb());
        row.cfa_off = read.sleb() * cie.data_align;
        row.cfa_other = false;
        break;
      case 0x13:
        row.cfa_off = read.sleb() * cie.data_align;
        break;
      case 0x15: {
        const std::uint64_t reg = read.uleb();
        (void)read.sleb();
        setRule(reg, Row::How::Other, 0);
        break;
      }
      case 0x2e:  // GNU_args_size
        (void)read.uleb();
        break;
      case 0x2f: {  // GNU_negative_offset_extended
        const std::uint64_t reg = read.uleb();
        setRule(reg, Row::How::Offset,
                -static_cast<std::int64_t>(read.uleb()) * cie.data_align);
        break;
      }
      default:  // set_loc and anything else
        return false;
    }
  }
  return read.ok();
}

// The rule of the frame whose return address is `pc`.
Rule ruleFor(std::uintptr_t pc) noexcept {
  Rule unknown;
  unknown.kind = Kind::Unknown;
  DwarfEhBases bases{};
  const auto* fde = static_cast<const std::uint8_t*>(
      _Unwind_Find_FDE(reinterpret_cast<void*>(pc - 1), &bases));
  if (fde == nullptr) {
    Rule end;
    end.kind = Kind::End;
    return end;
  }
  std::uint32_t length = 0;
  std::memcpy(&length, fde, 4);
  if (length == 0 || length == 0xffffffffu) return unknown;
  std::int32_t cie_offset = 0;
  std::memcpy(&cie_offset, fde + 4, 4);
  Cie cie;
  if (!readCie(fde + 4 - cie_offset, cie)) return unknown;
  Reader read(fde + 8, fde + 4 + length);
  read.skipEncoded(cie.fde_encoding);  // the function's start: bases.func
  read.skipEncoded(cie.fde_encoding & 0x0f);
  if (cie.fde_augmented) {
    const std::uint64_t size = read.uleb();
    read.moveTo(read.at() + size);
  }
  if (!read.ok()) return unknown;

  Row row;
  std::uintptr_t loc = reinterpret_cast<std::uintptr_t>(bases.func);
  if (!runProgram(Reader(cie.instructions, cie.end), cie, pc, loc, row, Row{}))
    return unknown;
  const Row initial = row;
  if (!runProgram(read, cie, pc, loc, row, initial)) return unknown;

  if (row.ra == Row::How::Undefined) {
    Rule end;
    end.kind = Kind::End;
    return end;
  }
  if (row.cfa_other || (row.cfa_reg != kRsp && row.cfa_reg != kRbp) ||
      row.ra != Row::How::Offset)
    return unknown;
  Rule rule;
  rule.kind = Kind::Step;
  rule.cfa_at_rbp = row.cfa_reg == kRbp;
  rule.cfa_off = static_cast<std::int32_t>(row.cfa_off);
  rule.ra_off = static_cast<std::int32_t>(row.ra_off);
  rule.rbp = row.rbp == Row::How::Same     ? SavedRbp::Same
             : row.rbp == Row::How::Offset ? SavedRbp::At
                                           : SavedRbp::Lost;
  rule.rbp_off = static_cast<std::int32_t>(row.rbp_off);
  if (row.cfa_off != rule.cfa_off || !rule.packable()) return unknown;
  return rule;
}

// ---- the rules, by return address ----

// Direct-mapped; an entry is the address (0: empty, 1: being written) and
// its packed rule. A writer takes the entry by swapping its tag for 1, so
// two never write one at once; a reader reads the tag, the rule, then the
// tag again, and uses the rule only when both tags name its address. A
// library unloaded and another loaded at its addresses would find the old
// library's rules (the walk's checks below stop a walk that goes astray).
constexpr std::size_t kRules = 4096;
struct RuleEntry {
  std::atomic<std::uintptr_t> tag{0};
  std::atomic<std::uint64_t> rule{0};
};
RuleEntry g_rules[kRules];

std::size_t slotOf(std::uintptr_t pc) noexcept {
  return static_cast<std::size_t>((pc * 0x9E3779B97F4A7C15ull) >> 52) & (kRules - 1);
}

Rule cachedRuleFor(std::uintptr_t pc) noexcept {
  RuleEntry& entry = g_rules[slotOf(pc)];
  if (entry.tag.load(std::memory_order_acquire) == pc) {
    const std::uint64_t bits = entry.rule.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (entry.tag.load(std::memory_order_relaxed) == pc) return Rule::unpack(bits);
  }
  const Rule rule = ruleFor(pc);
  std::uintptr_t seen = entry.tag.load(std::memory_order_relaxed);
  if (seen != 1 &&
      entry.tag.compare_exchange_strong(seen, 1, std::memory_order_acquire)) {
    entry.rule.store(rule.pack(), std::memory_order_relaxed);
    entry.tag.store(pc, std::memory_order_release);
  }
  return rule;
}

#endif  // __x86_64__

}  // namespace

[[gnu::noinline]] int walkFramesWithUnwinder(void** frames, int most) noexcept {
  const int count = unwinderWalkFromCallersCaller(frames, most);
  asm volatile("" ::: "memory");  // not a tail call: this frame is counted
  return count;
}

#if defined(__x86_64__)

// Reads other frames' saved words, which no sanitizer's shadow describes.
[[gnu::noinline, gnu::no_sanitize_address]] int walkFrames(void** frames,
                                                           int most) noexcept {
  if (most <= 0) return 0;
  if (_Unwind_Find_FDE == nullptr) {
    const int count = unwinderWalkFromCallersCaller(frames, most);
    asm volatile("" ::: "memory");
    return count;
  }
  // This function keeps a frame pointer (it reads it): its caller's frame
  // begins above the saved rbp and the return address. The caller's own
  // return address is the first one written.
  const auto* own = static_cast<const std::uintptr_t*>(__builtin_frame_address(0));
  std::uintptr_t pc = own[1];
  std::uintptr_t rsp = reinterpret_cast<std::uintptr_t>(own) + 16;
  std::uintptr_t rbp = own[0];
  bool rbp_known = true;
  bool in_caller = true;  // the frame of pc is the caller's: not written
  int count = 0;
  while (pc != 0 && count < most) {
    if (!in_caller) {
      frames[count++] = reinterpret_cast<void*>(pc);
      if (count == most) break;
    }
    in_caller = false;
    const Rule rule = cachedRuleFor(pc);
    if (rule.kind == Kind::End) break;
    if (rule.kind != Kind::Step || (rule.cfa_at_rbp && !rbp_known)) {
      count = unwinderWalkFromCallersCaller(frames, most);
      break;
    }
    const std::uintptr_t cfa =
        (rule.cfa_at_rbp ? rbp : rsp) + static_cast<std::intptr_t>(rule.cfa_off);
    // A caller's frame lies above its callee's, 8-aligned, and not further
    // than any frame's size could put it.
    constexpr std::uintptr_t kFarthest = std::uintptr_t{1} << 26;
    if (cfa <= rsp || cfa - rsp > kFarthest || (cfa & 7u) != 0) {
      count = unwinderWalkFromCallersCaller(frames, most);
      break;
    }
    const std::uintptr_t next_pc = *reinterpret_cast<const std::uintptr_t*>(
        cfa + static_cast<std::intptr_t>(rule.ra_off));
    if (rule.rbp == SavedRbp::At) {
      rbp = *reinterpret_cast<const std::uintptr_t*>(
          cfa + static_cast<std::intptr_t>(rule.rbp_off));
    } else if (rule.rbp == SavedRbp::Lost) {
      rbp_known = false;
    }
    rsp = cfa;
    pc = next_pc;
  }
  asm volatile("" ::: "memory");
  return count;
}

#else

int walkFrames(void** frames, int most) noexcept {
  const int count = unwinderWalkFromCallersCaller(frames, most);
  asm volatile("" ::: "memory");
  return count;
}

#endif

}  // namespace accel::memory::detail
