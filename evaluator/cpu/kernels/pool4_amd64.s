//go:build !noasm

#include "textflag.h"

// The 4×4 stride-4 max pool of the genomes `neateval evolve` breeds (28×28
// maps pooled to 7×7), on AVX-512, for rows of at most 32 floats. Each
// output row reads the four input rows, two vectors each, once.
//
// Fast path: the four rows reduced column by column (VPMAXUD: the floats'
// bits as unsigned integers), then each group of four columns to its first
// lane, then the groups' first lanes gathered into the row's outputs. On
// floats whose bits are at most +Inf's (no sign bit, no NaN: the output of
// a ReLU) the unsigned order is the float order and equal floats have equal
// bits, so this is the window's maximum, bit for bit, whatever the order of
// the reduction. A negative number (-0 included) or a NaN anywhere in a
// window makes that window's unsigned maximum exceed +Inf's bits: the row is
// then pooled again by the ordered path, and so is the rest of the plane.
//
// Ordered path: within each row every group of four columns reduced to its
// first lane (pairs, then pairs of pairs), then the four rows in order,
// then the first lane of each group gathered into the row's outputs. Each
// step keeps the earlier operand on a tie (VMAXPS returns its second source
// unless the first is greater), so the winner is the window's first maximum
// in row-major order, the scalar loop's: a signed zero comes out the same.
// NaN is not handled: the kernel reports whether it read one, and the
// caller then pools the planes again with the general kernel, which
// propagates the first NaN as the scalar loop does.

DATA ·pool4Idx+0(SB)/4, $0
DATA ·pool4Idx+4(SB)/4, $4
DATA ·pool4Idx+8(SB)/4, $8
DATA ·pool4Idx+12(SB)/4, $12
DATA ·pool4Idx+16(SB)/4, $16
DATA ·pool4Idx+20(SB)/4, $20
DATA ·pool4Idx+24(SB)/4, $24
DATA ·pool4Idx+28(SB)/4, $28
DATA ·pool4Idx+32(SB)/4, $0
DATA ·pool4Idx+36(SB)/4, $0
DATA ·pool4Idx+40(SB)/4, $0
DATA ·pool4Idx+44(SB)/4, $0
DATA ·pool4Idx+48(SB)/4, $0
DATA ·pool4Idx+52(SB)/4, $0
DATA ·pool4Idx+56(SB)/4, $0
DATA ·pool4Idx+60(SB)/4, $0
GLOBL ·pool4Idx(SB), RODATA|NOPTR, $64

// GROUP reduces each group of four lanes of Z to its first lane.
#define GROUP(Z) \
	VPERMILPS $0xB1, Z, Z8 \
	VMAXPS    Z, Z8, Z     \
	VPERMILPS $0x4E, Z, Z8 \
	VMAXPS    Z, Z8, Z

// UGROUP reduces each group of four lanes of Z to its first lane, as
// unsigned integers.
#define UGROUP(Z) \
	VPSHUFD $0xB1, Z, Z8 \
	VPMAXUD Z, Z8, Z     \
	VPSHUFD $0x4E, Z, Z8 \
	VPMAXUD Z, Z8, Z

// NANS ors into K7 the lanes of Z that are NaN.
#define NANS(Z) \
	VCMPPS $3, Z, Z, K4 \
	KORW   K4, K7, K7

// func maxPool4x4_512(out, in []float32, planes, oh, ow, h, w int) (nan int)
TEXT ·maxPool4x4_512(SB), NOSPLIT, $0-96
	MOVQ out_base+0(FP), DI
	MOVQ in_base+24(FP), SI
	MOVQ planes+48(FP), R8
	MOVQ oh+56(FP), R9
	MOVQ ow+64(FP), R10
	MOVQ h+72(FP), R11
	MOVQ w+80(FP), R12

	// K1: the ow output lanes; K2, K3: the 4·ow input lanes of a row.
	MOVQ R10, CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	LEAQ 0(R10*4), CX
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K2
	SHRQ $16, AX
	KMOVW AX, K3
	KXORW K7, K7, K7
	VMOVDQU32 ·pool4Idx(SB), Z15
	MOVL $0x7F800000, AX // +Inf's bits
	VPBROADCASTD AX, Z14

	SHLQ $2, R12  // input row, bytes
	MOVQ R12, R13
	IMULQ R11, R13 // input plane, bytes
	MOVQ R10, R14
	SHLQ $2, R14  // output row, bytes

plane:
	MOVQ SI, BX
	MOVQ R9, CX
	XORQ DX, DX // 1: the rest of the plane on the ordered path

row:
	MOVQ BX, AX
	VMOVUPS.Z (AX), K2, Z0
	VMOVUPS.Z 64(AX), K3, Z1
	ADDQ R12, AX
	VMOVUPS.Z (AX), K2, Z2
	VMOVUPS.Z 64(AX), K3, Z3
	ADDQ R12, AX
	VMOVUPS.Z (AX), K2, Z4
	VMOVUPS.Z 64(AX), K3, Z5
	ADDQ R12, AX
	VMOVUPS.Z (AX), K2, Z6
	VMOVUPS.Z 64(AX), K3, Z7
	TESTQ DX, DX
	JNE ordered
	VPMAXUD Z2, Z0, Z9
	VPMAXUD Z6, Z4, Z10
	VPMAXUD Z3, Z1, Z11
	VPMAXUD Z7, Z5, Z12
	VPMAXUD Z10, Z9, Z9
	VPMAXUD Z12, Z11, Z11
	UGROUP(Z9)
	UGROUP(Z11)
	VMOVAPS Z15, Z10
	VPERMI2D Z11, Z9, Z10
	VPCMPUD $6, Z14, Z10, K1, K4 // outputs above +Inf's bits
	KORTESTW K4, K4
	JNE slowrow
	VMOVUPS Z10, K1, (DI)
	JMP nextrow

slowrow:
	MOVQ $1, DX

ordered:
	NANS(Z0)
	NANS(Z1)
	NANS(Z2)
	NANS(Z3)
	NANS(Z4)
	NANS(Z5)
	NANS(Z6)
	NANS(Z7)
	GROUP(Z0)
	GROUP(Z1)
	GROUP(Z2)
	GROUP(Z3)
	GROUP(Z4)
	GROUP(Z5)
	GROUP(Z6)
	GROUP(Z7)
	VMAXPS Z0, Z2, Z0
	VMAXPS Z1, Z3, Z1
	VMAXPS Z0, Z4, Z0
	VMAXPS Z1, Z5, Z1
	VMAXPS Z0, Z6, Z0
	VMAXPS Z1, Z7, Z1
	VMOVAPS Z15, Z8
	VPERMI2PS Z1, Z0, Z8
	VMOVUPS Z8, K1, (DI)

nextrow:
	ADDQ R14, DI
	LEAQ (BX)(R12*4), BX
	DECQ CX
	JNE row

	ADDQ R13, SI
	DECQ R8
	JNE plane

	KMOVW K7, AX
	MOVQ AX, nan+88(FP)
	VZEROUPPER
	RET
