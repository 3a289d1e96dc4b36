package redistest

import (
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of three masters and no replicas, run for one test. Its zero value
// is not usable; call [StartCluster].
type Cluster struct {
	// Nodes are the masters, each a [Server] on its own free loopback port.
	Nodes []*Server

	t TB
}

// clusterTimeout bounds the wait for the cluster to cover every slot on every node.
const clusterTimeout = 60 * time.Second

// StartCluster runs three redis-server processes in cluster mode (each on a free loopback port P
// whose bus port P+10000 is free too, no saves, no append-only file), joins them with
// `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes`, and returns once every node
// reports cluster_state:ok. They are stopped when the test ends. It fails the test, saying how to
// install them, when redis-server or redis-cli is not on the PATH.
func StartCluster(t TB) *Cluster {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		t.Fatalf("redistest: redis-cli is not installed (%v); install it with `apt-get install redis-tools` "+
			"(or `brew install redis`) so that the cluster tests can join their nodes", err)
		return nil
	}
	dir := t.TempDir()
	c := &Cluster{t: t}
	args := []string{"redis-cli", "--cluster", "create"}
	for range 3 {
		n := start(t, dir, []string{"--cluster-enabled", "yes", "--cluster-config-file", dir + "/nodes-PORT.conf",
			"--cluster-node-timeout", "5000"})
		if n == nil {
			return nil
		}
		c.Nodes = append(c.Nodes, n)
		args = append(args, n.Addr)
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: %s: %v\n%s", strings.Join(args, " "), err, out)
		return nil
	}
	c.awaitOK(ctx)
	return c
}

// awaitOK polls every node's CLUSTER INFO until all report cluster_state:ok, for at most ctx.
func (c *Cluster) awaitOK(ctx context.Context) {
	c.t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for _, n := range c.Nodes {
		cl := redis.NewClient(&redis.Options{Addr: n.Addr})
		for {
			info, err := cl.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			select {
			case <-ctx.Done():
				cl.Close()
				c.t.Fatalf("redistest: the cluster node %s did not report cluster_state:ok within %v: %q, %v",
					n.Addr, clusterTimeout, info, err)
				return
			case <-tick.C:
			}
		}
		cl.Close()
	}
}

// Addrs returns the nodes' host:port.
func (c *Cluster) Addrs() []string {
	var a []string
	for _, n := range c.Nodes {
		a = append(a, n.Addr)
	}
	return a
}

// URL returns the cluster in go-redis's ParseClusterURL form:
// redis://HOST1:PORT1?addr=HOST2:PORT2&addr=HOST3:PORT3.
func (c *Cluster) URL() string {
	a := c.Addrs()
	return "redis://" + a[0] + "?addr=" + strings.Join(a[1:], "&addr=")
}

// Client returns a cluster client of the nodes, closed when the test ends.
func (c *Cluster) Client() *redis.ClusterClient {
	cl := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	c.t.Cleanup(func() { cl.Close() })
	return cl
}
