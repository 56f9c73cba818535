package droverapi

// MaxRequestIDLen is the longest request id a controller takes
// (RequestIDHeader): room for a UUID or a ULID with a prefix, little
// enough that an hour of remembered submissions stays small.
const MaxRequestIDLen = 64

// ValidRequestID reports whether id may name a request: 1 to
// MaxRequestIDLen characters of [A-Za-z0-9_-], which a header, a log
// line and the state log carry as they are.
func ValidRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}
