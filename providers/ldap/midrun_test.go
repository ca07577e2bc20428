package ldap_test

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/entitlements-go/entitlements/backends"

	"github.com/entitlements-go/entitlements/calc"
	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/deploy"
	"github.com/entitlements-go/entitlements/providers"
	ldapprov "github.com/entitlements-go/entitlements/providers/ldap"
)

// killProxy forwards LDAP connections to a server and kills the server when the client sends
// one write (Add, Modify, Del) more than allowed, before forwarding it: the deterministic way
// to have a server die while writes are in flight.
type killProxy struct {
	ln      net.Listener
	target  string
	allowed atomic.Int32
	writes  atomic.Int32
	kill    func()
	once    sync.Once
	mu      sync.Mutex
	conns   []net.Conn
}

func startKillProxy(t *testing.T, target string, kill func()) *killProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &killProxy{ln: ln, target: target, kill: kill}
	p.allowed.Store(1 << 30)
	t.Cleanup(func() { ln.Close(); p.closeAll() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *killProxy) URL() string { return "ldap://" + p.ln.Addr().String() }

func (p *killProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *killProxy) serve(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, s)
	p.mu.Unlock()
	go func() { io.Copy(c, s); c.Close() }()
	defer s.Close()
	defer c.Close()
	for {
		msg, err := readLDAPMessage(c)
		if err != nil {
			return
		}
		if isWrite(msg) && p.writes.Add(1) > p.allowed.Load() {
			p.once.Do(func() { p.kill(); p.closeAll() })
			return
		}
		if _, err := s.Write(msg); err != nil {
			return
		}
	}
}

// readLDAPMessage reads one BER-encoded LDAPMessage (SEQUENCE, definite length).
func readLDAPMessage(r io.Reader) ([]byte, error) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	n := int(head[1])
	lenBytes := []byte{}
	if n&0x80 != 0 {
		lenBytes = make([]byte, n&0x7f)
		if _, err := io.ReadFull(r, lenBytes); err != nil {
			return nil, err
		}
		n = 0
		for _, b := range lenBytes {
			n = n<<8 | int(b)
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return append(append(head, lenBytes...), body...), nil
}

// isWrite reports whether the message's protocol op is AddRequest (0x68), ModifyRequest
// (0x66) or DelRequest (0x4a). The op follows the messageID INTEGER.
func isWrite(msg []byte) bool {
	i := 2
	if msg[1]&0x80 != 0 {
		i += int(msg[1] & 0x7f)
	}
	if i+1 >= len(msg) || msg[i] != 0x02 {
		return false
	}
	i += 2 + int(msg[i+1])
	if i >= len(msg) {
		return false
	}
	switch msg[i] {
	case 0x68, 0x66, 0x4a:
		return true
	}
	return false
}

func TestServerKilledWhileWritesAreInFlight(t *testing.T) {
	srv := startKittens(t, false)
	mustApply(t, deployCase(t, copyCase(t, "acc_initial_run", srv, srv.URL, ""), true, deploy.Options{}))

	proxy := startKillProxy(t, srv.URL[len("ldap://"):], srv.Kill)
	second := copyCase(t, "acc_modify_and_delete", srv, proxy.URL(), "")
	t.Chdir(second)
	ctx := context.Background()
	reg := ldapprov.NewRegistry(ldapprov.Options{WriteConcurrency: 4})
	defer reg.Close()
	repo, err := calc.Load(ctx, "config.yaml", calc.Options{Types: backends.Types(), Now: now, People: reg.PeopleLoader()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := repo.Calculate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f := func(ou *config.OU) (providers.Provider, error) { return reg.Provider(ou) }
	opt := deploy.Options{Backends: backends.Spec().WithFactory(f, "ldap", "member_of"), Guard: scenarioGuard()}
	plan, err := deploy.Build(ctx, res, repo.Config(), opt)
	if err != nil || plan.Err() != nil {
		t.Fatalf("plan: %v %v", err, plan.Err())
	}
	const allowed = 3
	proxy.allowed.Store(allowed)
	rep, _ := deploy.Apply(ctx, plan, opt.ApplyOptions())
	if rep.Err() == nil {
		t.Fatal("apply reported success although the server died during it")
	}
	applied, broken := 0, 0
	for _, tr := range rep.Targets {
		for _, o := range tr.Outcomes {
			switch {
			case o.Status == providers.Applied && o.Change.Kind != providers.CreateContainer:
				applied++
			case o.Status.Failure():
				broken++
			}
		}
	}
	t.Logf("applied %d, failed or unknown %d, writes seen by the proxy %d", applied, broken, proxy.writes.Load())
	if applied > allowed || broken == 0 {
		t.Errorf("%d writes reported applied (at most %d reached the server), %d failed or unknown", applied, allowed, broken)
	}

	// The server comes back; a new run converges to the desired state.
	srv.Restart(t)
	proxy.allowed.Store(1 << 30)
	mustApply(t, deployCase(t, second, true, deploy.Options{}))
	expectState(t, srv, "acc_modify_and_delete")
}
