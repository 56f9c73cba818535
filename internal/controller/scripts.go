package controller

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/state"
)

// A job's script and environment are kept in the state store under a
// random key, not in memory: they are most of a job's size and are read
// only to launch it.

func scriptBlobs(script string, env []string) (string, []state.Blob) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on Linux; a panic beats a reused key.
		panic(fmt.Sprintf("random script key: %v", err))
	}
	key := hex.EncodeToString(b[:])
	return key, []state.Blob{
		{Key: key + "/script", Data: []byte(script)},
		{Key: key + "/env", Data: []byte(strings.Join(env, "\x00"))},
	}
}

// loadScript returns a job's script and environment.
func (c *Controller) loadScript(j *job.Job) (string, []string, error) {
	if j.ScriptKey == "" {
		return j.Req.Script, j.Req.Environment, nil
	}
	script, err := c.log.Blob(j.ScriptKey + "/script")
	if err != nil {
		return "", nil, err
	}
	env, err := c.log.Blob(j.ScriptKey + "/env")
	if err != nil {
		return "", nil, err
	}
	var vars []string
	if len(env) > 0 {
		vars = strings.Split(string(env), "\x00")
	}
	return string(script), vars, nil
}

// scriptBlobKeys names the blobs of the scripts stored under keys.
func scriptBlobKeys(keys []string) []string {
	var blobKeys []string
	for _, k := range keys {
		blobKeys = append(blobKeys, k+"/script", k+"/env")
	}
	return blobKeys
}

// deleteScripts removes the stored scripts of purged jobs.
func (c *Controller) deleteScripts(keys []string) error {
	if err := c.log.DeleteBlobs(scriptBlobKeys(keys)); err != nil {
		return fmt.Errorf("delete scripts of purged jobs: %w", err)
	}
	return nil
}

// deleteOrphanScripts removes stored scripts no job refers to: a crash
// between a purge and the deletion of its scripts leaves such orphans.
func (c *Controller) deleteOrphanScripts() error {
	keys, err := c.log.BlobKeys()
	if err != nil {
		return err
	}
	c.mu.RLock()
	used := c.st.ScriptKeys()
	c.mu.RUnlock()
	var orphans []string
	for _, k := range keys {
		base, _, _ := strings.Cut(k, "/")
		if !used[base] {
			orphans = append(orphans, k)
		}
	}
	if err := c.log.DeleteBlobs(orphans); err != nil && !errors.Is(err, state.ErrNoBlob) {
		return err
	}
	return nil
}
