package worker

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Sign returns the Geneva-Signature header of a request sent at t:
// "t=<unix seconds>,v1=<hex>", with a v1 for each secret (two while a secret
// is rotated: HTTPConfig.NextSecret). Each v1 is the lowercase hex
// HMAC-SHA256, keyed with the secret, of the request's method, URL (as
// SignedURL writes it) and body after the time:
//
//	<t> "\n" <METHOD> "\n" <url> "\n" <body>
//
// so a request signed for one endpoint is not valid at another. Endpoints
// check it with VerifySignature, or as docs/http-steps.md's verifier does.
func Sign(method, url string, body []byte, t time.Time, secrets ...[]byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var header strings.Builder
	header.WriteString("t=" + ts)
	for _, secret := range secrets {
		header.WriteString(",v1=" + hex.EncodeToString(signature(secret, ts, method, url, body)))
	}
	return header.String()
}

// signature is the HMAC of a request at ts, under secret.
func signature(secret []byte, ts, method, url string, body []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "\n" + method + "\n" + url + "\n"))
	mac.Write(body)
	return mac.Sum(nil)
}

// SignedURL is a request's URL as its signature covers it: the scheme and
// host as the step's URL has them, then the path and query as the request
// line sends them ("https://hooks.example.com/steps/charge?x=1").
func SignedURL(u *url.URL) string {
	return u.Scheme + "://" + u.Host + u.RequestURI()
}

// VerifySignature tells whether header (a request's Geneva-Signature) holds
// a v1 of the request, as received, under secret, made at most tolerance
// from now. url is the endpoint's own URL for the request, as the step's
// definition names it (its scheme and host as known to the endpoint, not
// taken from the request's Host, then the request line's path and query):
// a request signed for another endpoint does not verify. The v1s are
// compared in constant time.
func VerifySignature(header, method, url string, body, secret []byte, now time.Time, tolerance time.Duration) bool {
	var ts string
	var given [][]byte
	for part := range strings.SplitSeq(header, ",") {
		name, value, _ := strings.Cut(part, "=")
		switch name {
		case "t":
			ts = value
		case "v1":
			if v1, err := hex.DecodeString(value); err == nil {
				given = append(given, v1)
			}
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || ts != strconv.FormatInt(unix, 10) || now.Sub(time.Unix(unix, 0)).Abs() > tolerance {
		return false
	}
	want := signature(secret, ts, method, url, body)
	for _, v1 := range given {
		if hmac.Equal(v1, want) {
			return true
		}
	}
	return false
}
