// What the AVX2 and AVX-512 paths share: the fp32 operations whose operand order
// matters, and the three float formats, written once over each path's primitives.
// path_avx2.cc, path_avx512.cc and path_avx512_bf16.cc include it once each, after
// they define COHORT_KERNEL and `Isa`, the path's primitives:
//   F, I, Mask  fp32 vector, int32 vector, a NaN mask; kLanes, kStoreBytes;
//   loadF/storeF (fp32), halfToF/fToHalf (F16C), widenU16/narrowU32 (kLanes
//   16-bit elements to and from int32 lanes), loadI/storeI (a whole vector),
//   asF/asI, shl16/shr16/andI/addI/setI, nanOf, addUnless (m ? x : x + b),
//   orWhere (m ? x | c : x), oddWords (the even 16-bit words of one vector and the
//   odd ones of another), max, min, div, splat, streamStore.
// Internal linkage, like path_body.h. No include guard, on purpose.

#include <cstddef>
#include <cstdint>

namespace cohort::kernels {
namespace {

struct Vec : Isa {
  // VADDPS and VMULPS return the first source's NaN (quieted) when both are NaNs:
  // ops::sum's and ops::prod's rule with a first. The compiler swaps the operands of
  // _mm*_add_ps at will (it does, to fold a load), so the order is fixed in assembly.
  COHORT_KERNEL static F add(F a, F b) {
    F r;
    asm("vaddps %2, %1, %0" : "=v"(r) : "v"(a), "vm"(b));
    return r;
  }
  COHORT_KERNEL static F mul(F a, F b) {
    F r;
    asm("vmulps %2, %1, %0" : "=v"(r) : "v"(a), "vm"(b));
    return r;
  }
};

struct F32Format {
  using Elem = float;
  static constexpr bool kPaired = false;
  COHORT_KERNEL static Isa::F load(const Elem* p) { return Isa::loadF(p); }
  COHORT_KERNEL static void store(Elem* p, Isa::F v) { Isa::storeF(p, v); }
};

struct HalfFormat {
  using Elem = std::uint16_t;
  static constexpr bool kPaired = false;
  COHORT_KERNEL static Isa::F load(const Elem* p) { return Isa::halfToF(p); }
  COHORT_KERNEL static void store(Elem* p, Isa::F v) { Isa::fToHalf(p, v); }
};

// A pair keeps the even-numbered elements in v[0] and the odd ones in v[1]: a shift
// and a mask away from memory, so pairs load and store without shuffles. The
// rounding is integer arithmetic, which every path has (a path with a faster one
// defines COHORT_OWN_BF16_FORMAT and its own Bf16Format over this one).
struct Bf16Integer {
  using Elem = std::uint16_t;
  static constexpr bool kPaired = true;
  using I = Isa::I;
  // floatToBf16 in the top half of each lane (the bottom half is left over): x + 0x7fff
  // + its lsb, or for a NaN x with the quiet bit set.
  COHORT_KERNEL static I roundedHigh(Isa::F v) {
    const I x = Isa::asI(v);
    const Isa::Mask nan = Isa::nanOf(v);
    const I lsb = Isa::andI(Isa::shr16(x), Isa::setI(1));
    const I t = Isa::addUnless(nan, x, Isa::addI(lsb, Isa::setI(0x7fff)));
    return Isa::orWhere(nan, t, Isa::setI(0x00400000));
  }
  COHORT_KERNEL static Isa::F load(const Elem* p) { return Isa::asF(Isa::shl16(Isa::widenU16(p))); }
  COHORT_KERNEL static void store(Elem* p, Isa::F v) {
    Isa::narrowU32(p, Isa::shr16(roundedHigh(v)));
  }
  COHORT_KERNEL static void load2(const Elem* p, Isa::F* v) {
    const I x = Isa::loadI(p);
    v[0] = Isa::asF(Isa::shl16(x));
    v[1] = Isa::asF(Isa::andI(x, Isa::setI(~0xffff)));
  }
  COHORT_KERNEL static void store2(Elem* p, const Isa::F* v) {
    Isa::storeI(p, Isa::oddWords(Isa::shr16(roundedHigh(v[0])), roundedHigh(v[1])));
  }
};

#ifndef COHORT_OWN_BF16_FORMAT
using Bf16Format = Bf16Integer;
#endif

}  // namespace
}  // namespace cohort::kernels
