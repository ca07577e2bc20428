// Package capped bounds how much of an HTTP answer is read: an API client must never read
// whatever a server chooses to send into memory (the SDKs read bodies with io.ReadAll).
package capped

import "io"

// Body returns rc reading at most limit bytes. Reading past the limit fails with tooLarge
// when the body has more, rather than ending early: a truncated document must never be
// decoded as if it were whole. A limit of 0 or less returns rc unchanged.
func Body(rc io.ReadCloser, limit int64, tooLarge error) io.ReadCloser {
	if limit <= 0 {
		return rc
	}
	return &body{ReadCloser: rc, left: limit, err: tooLarge}
}

type body struct {
	io.ReadCloser
	left int64
	err  error
}

func (b *body) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, b.err
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
