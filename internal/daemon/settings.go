// Package daemon holds the `drover controller` and `drover node` entry
// points: reading slurm.conf and Drover's own settings, and running the
// controller or node agent until a signal stops it.
package daemon

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/tlsconf"
	"github.com/droverhq/drover/internal/usercred"
)

// Settings are Drover's own settings, on top of slurm.conf: flags,
// DROVER_* environment variables and an optional drover.yaml, in that
// order of precedence (viper).
func Settings() *viper.Viper {
	v := viper.New()
	v.SetEnvPrefix("DROVER")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	v.SetConfigName("drover")
	v.SetConfigType("yaml")
	v.AddConfigPath("/etc/drover")
	v.AddConfigPath(".")
	v.SetDefault("log-level", "info")
	return v
}

// ReadSettingsFile loads drover.yaml if there is one.
func ReadSettingsFile(v *viper.Viper) error {
	if err := v.ReadInConfig(); err != nil {
		if _, ok := err.(viper.ConfigFileNotFoundError); ok {
			return nil
		}
		return fmt.Errorf("read drover settings: %w", err)
	}
	return nil
}

// ConfPath resolves slurm.conf: the flag, then SLURM_CONF, then Slurm's
// default location.
func ConfPath(flag string) string {
	if flag != "" {
		return flag
	}
	if p := os.Getenv("SLURM_CONF"); p != "" {
		return p
	}
	return "/etc/slurm/slurm.conf"
}

// ClusterKey loads the cluster key every daemon signs and checks
// messages with: --key-file, or slurm.jwks or slurm.key beside slurm.conf.
// A daemon does not start without one: the error says how to make it.
func ClusterKey(v *viper.Viper, sc *slurmconf.Config, confPath string) (*clusterkey.Ring, error) {
	// SlurmUser may own the key (the controller runs as it), as may
	// SlurmdUser; the key is theirs to read anyway.
	var owners []uint32
	for _, name := range []string{sc.SlurmUser, sc.SlurmdUser} {
		if id, err := usercred.LookupName(name); err == nil {
			owners = append(owners, id.UID)
		}
	}
	ring, err := clusterkey.Load(confPath, v.GetString("key-file"), owners...)
	if err != nil {
		return nil, fmt.Errorf("cluster key: %w", err)
	}
	return ring, nil
}

// LoadConf reads slurm.conf and logs its warnings once.
func LoadConf(path string, logger *slog.Logger) (*slurmconf.Config, error) {
	sc, err := slurmconf.Load(path)
	if err != nil {
		return nil, err
	}
	for _, w := range sc.Warnings {
		logger.Warn("slurm.conf", "warning", w.String())
	}
	return sc, nil
}

// Logger builds the daemon's logger at the configured level.
func Logger(w io.Writer, level string) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: parseLevel(level)}))
}

func parseLevel(level string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return l
}

// SocketPath is where the controller's unix socket lives unless the
// settings say otherwise.
func SocketPath(v *viper.Viper, sc *slurmconf.Config) string {
	if p := v.GetString("socket"); p != "" {
		return p
	}
	return filepath.Join(sc.StateSaveLocation, "drover.sock")
}

// ClusterTLS reads TLSType and TLSParameters, with this daemon's own
// certificate and key from Drover's settings (tls-cert-file,
// tls-key-file) in place of role's when given. It returns the listening
// and the connecting side's configurations, both nil when TLS is off.
func ClusterTLS(v *viper.Viper, sc *slurmconf.Config, confPath string, role tlsconf.Role) (server, client *tls.Config, err error) {
	typ, _ := sc.Value("TLSType")
	params, _ := sc.Value("TLSParameters")
	c, err := tlsconf.FromSlurm(typ, params, confPath)
	if err != nil || !c.Enabled {
		return nil, nil, err
	}
	c.Override(role, v.GetString("tls-cert-file"), v.GetString("tls-key-file"))
	if role != "" {
		if server, err = c.Server(role); err != nil {
			return nil, nil, err
		}
	}
	if client, err = c.Client(); err != nil {
		return nil, nil, err
	}
	return server, client, nil
}
