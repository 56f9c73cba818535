// Package jwtauth is Slurm's auth/jwt for Drover's REST API: HS256 tokens
// signed with the cluster's key (AuthAltParameters=jwt_key=), naming their
// user in the "sun" claim, as `scontrol token` hands them out.
package jwtauth

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultLifespan is a token's life when none is asked for (Slurm's
// DEFAULT_AUTH_TOKEN_LIFESPAN).
const DefaultLifespan = 1800 * time.Second

// MinKeyBytes is the shortest key accepted: HS256 wants 256 bits.
const MinKeyBytes = 32

// Config is what AuthAltTypes and AuthAltParameters say of auth/jwt.
type Config struct {
	// Enabled is AuthAltTypes naming auth/jwt.
	Enabled bool
	// KeyFile is jwt_key= (default StateSaveLocation/jwt_hs256.key).
	KeyFile string
	// MaxLifespan is max_token_lifespan= (0: no limit) for users other
	// than root and SlurmUser.
	MaxLifespan time.Duration
	// NoCreation is disable_token_creation: only root and SlurmUser get
	// tokens from the controller.
	NoCreation bool
}

// ParseConfig reads slurm.conf's AuthAltTypes and AuthAltParameters;
// stateDir is StateSaveLocation, where the key is by default.
func ParseConfig(altTypes, altParams, stateDir string) (Config, error) {
	var c Config
	for _, t := range strings.Split(altTypes, ",") {
		if strings.TrimSpace(t) == "auth/jwt" {
			c.Enabled = true
		}
	}
	c.KeyFile = stateDir + "/jwt_hs256.key"
	for _, p := range strings.Split(altParams, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch strings.ToLower(k) {
		case "":
		case "jwt_key":
			if v == "" {
				return Config{}, errors.New("AuthAltParameters: jwt_key= needs a file")
			}
			c.KeyFile = v
		case "max_token_lifespan":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return Config{}, fmt.Errorf("AuthAltParameters: invalid max_token_lifespan=%s", v)
			}
			c.MaxLifespan = time.Duration(n) * time.Second
		case "disable_token_creation":
			c.NoCreation = true
		}
	}
	return c, nil
}

// LoadKey reads the signing key.
func LoadKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth/jwt key: %w", err)
	}
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("auth/jwt key %s: %d bytes, want at least %d", path, len(key), MinKeyBytes)
	}
	return key, nil
}

// Issue signs a token for user, valid from now for lifespan.
func Issue(key []byte, user string, lifespan time.Duration, now time.Time) (string, error) {
	if user == "" {
		return "", errors.New("no user name for the token")
	}
	claims := jwt.MapClaims{
		"iat": now.Unix(),
		"exp": now.Add(lifespan).Unix(),
		"sun": user,
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(key)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return tok, nil
}

// Errors of Verify.
var (
	ErrInvalid = errors.New("Invalid authentication credential")
	ErrExpired = errors.New("Authentication credential expired")
)

// Verify checks a token against key at now and returns the user it names
// ("sun", else "username"). Only HS256 is accepted: a token signed with
// another algorithm, "none" included, is invalid, as are a forged
// signature and a token without an expiry.
func Verify(key []byte, token string, now time.Time) (string, error) {
	parsed, err := jwt.Parse(token, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	if errors.Is(err, jwt.ErrTokenExpired) {
		return "", ErrExpired
	}
	if err != nil || !parsed.Valid {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	claims, _ := parsed.Claims.(jwt.MapClaims)
	for _, c := range []string{"sun", "username"} {
		if u, ok := claims[c].(string); ok && u != "" {
			return u, nil
		}
	}
	return "", fmt.Errorf("%w: no user name in the token", ErrInvalid)
}
