package tfevents

import (
	"encoding/binary"
	"hash/crc32"
)

// A record on disk is
//
//	uint64 length          little-endian, the length of data
//	uint32 masked CRC32C   of the 8 length bytes
//	byte   data[length]    one serialized Event
//	uint32 masked CRC32C   of data
//
// the framing of TensorFlow's record_writer.cc, which TensorBoard reads.
const (
	headerLen = 8 + 4
	footerLen = 4
	maskDelta = 0xa282ead8
	maxRecord = 1 << 30 // a sanity cap on the length field when reading
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is the CRC32C of b, masked as TensorFlow masks stored CRCs (a
// CRC of data that itself holds CRCs is otherwise prone to trouble):
// rotated right by 15 bits, plus a constant.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + maskDelta
}

// appendRecord appends data framed as one record to dst.
func appendRecord(dst, data []byte) []byte {
	var h [headerLen]byte
	binary.LittleEndian.PutUint64(h[:8], uint64(len(data)))
	binary.LittleEndian.PutUint32(h[8:], maskedCRC(h[:8]))
	dst = append(dst, h[:]...)
	dst = append(dst, data...)
	return binary.LittleEndian.AppendUint32(dst, maskedCRC(data))
}
