package oauth

import "sync"

// Cache keeps one Client per server across probes, so discovery and tokens
// are reused; a server whose client configuration changed gets a new one.
type Cache struct {
	mu      sync.Mutex
	clients map[string]*Client
}

// Client returns the server's client for cfg, made or updated.
func (c *Cache) Client(cfg Config) (*Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[cfg.Server]; ok && cl.cfg.key() == cfg.key() {
		cl.update(cfg)
		return cl, nil
	}
	cl, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if c.clients == nil {
		c.clients = map[string]*Client{}
	}
	c.clients[cfg.Server] = cl
	return cl, nil
}

// Retain forgets the clients of servers not in keep (removed on reload).
func (c *Cache) Retain(keep func(server string) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.clients {
		if !keep(name) {
			delete(c.clients, name)
		}
	}
}
