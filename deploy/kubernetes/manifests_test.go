package kubernetes_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/lockstore"
)

// kustomization holds the fields of the kustomization.yaml files (and
// kustomize Components) these directories use; decoding them strictly
// makes an unknown (misspelt) field an error.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Labels     []struct {
		Pairs            map[string]string `json:"pairs"`
		IncludeSelectors bool              `json:"includeSelectors,omitempty"`
	} `json:"labels,omitempty"`
	Resources  []string `json:"resources"`
	Components []string `json:"components,omitempty"`
	Patches    []struct {
		Target *struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"target,omitempty"`
		Patch string `json:"patch"`
	} `json:"patches,omitempty"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
		Digest  string `json:"digest,omitempty"`
	} `json:"images,omitempty"`
	ConfigMapGenerator []generator `json:"configMapGenerator,omitempty"`
	SecretGenerator    []generator `json:"secretGenerator,omitempty"`
}

// generator is a configMapGenerator or secretGenerator entry that makes an
// object from files (KEY=PATH, or PATH whose base name is the key).
type generator struct {
	Name  string   `json:"name"`
	Files []string `json:"files"`
}

// files maps each key of the generated object to its file under dir.
func (g generator) files(dir string) map[string]string {
	out := map[string]string{}
	for _, f := range g.Files {
		key, path, ok := strings.Cut(f, "=")
		if !ok {
			key, path = filepath.Base(f), f
		}
		out[key] = filepath.Join(dir, path)
	}
	return out
}

// manifests is every object of a kustomization tree (its resources, the
// kustomizations and components it includes), strictly decoded into its
// real Kubernetes or prometheus-operator type. Patches are not applied
// here: TestOverlaysRender renders with kustomize itself.
type manifests struct {
	deployment     *appsv1.Deployment
	statefulSet    *appsv1.StatefulSet
	services       []*corev1.Service
	configMap      *corev1.ConfigMap
	secret         *corev1.Secret
	serviceMonitor *monitoringv1.ServiceMonitor
	podMonitor     *monitoringv1.PodMonitor
	pdb            *policyv1.PodDisruptionBudget
	prometheusRule *monitoringv1.PrometheusRule
}

func decodeStrict(t *testing.T, file string, b []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// load decodes the kustomization tree rooted at "." (the single-replica
// layout) and checks that it has every object that layout needs, and none of
// the user's (see TestLayoutsCarryNoUserData).
func load(t *testing.T) manifests {
	t.Helper()
	m := loadTree(t, ".")
	if m.deployment == nil || m.service() == nil || m.serviceMonitor == nil || m.prometheusRule == nil {
		t.Fatalf("kustomization.yaml lacks one of Deployment, Service, ServiceMonitor, PrometheusRule")
	}
	return m
}

// loadTree decodes the kustomization (or Component) in dir and everything
// it includes.
func loadTree(t *testing.T, dir string) manifests {
	t.Helper()
	var m manifests
	m.add(t, dir, map[string]bool{})
	return m
}

func (m *manifests) add(t *testing.T, dir string, seen map[string]bool) {
	t.Helper()
	dir = filepath.Clean(dir)
	if seen[dir] {
		t.Fatalf("%s: included twice", dir)
	}
	seen[dir] = true
	var k kustomization
	kfile := filepath.Join(dir, "kustomization.yaml")
	decodeStrict(t, kfile, read(t, kfile), &k)
	for _, res := range append(slices.Clone(k.Resources), k.Components...) {
		path := filepath.Join(dir, res)
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			m.add(t, path, seen)
			continue
		}
		m.addFile(t, path, read(t, path))
	}
}

// addFile decodes one object into its type.
func (m *manifests) addFile(t *testing.T, file string, b []byte) {
	t.Helper()
	if strings.Contains(string(b), "\n---") {
		t.Fatalf("%s: one object per file", file)
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(b, &tm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var obj any
	once := func(have bool) {
		if have {
			t.Fatalf("%s: a second %s", file, tm.Kind)
		}
	}
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		once(m.deployment != nil)
		m.deployment = &appsv1.Deployment{}
		obj = m.deployment
	case "apps/v1 StatefulSet":
		once(m.statefulSet != nil)
		m.statefulSet = &appsv1.StatefulSet{}
		obj = m.statefulSet
	case "v1 Service":
		svc := &corev1.Service{}
		m.services = append(m.services, svc)
		obj = svc
	case "v1 ConfigMap":
		once(m.configMap != nil)
		m.configMap = &corev1.ConfigMap{}
		obj = m.configMap
	case "v1 Secret":
		once(m.secret != nil)
		m.secret = &corev1.Secret{}
		obj = m.secret
	case "monitoring.coreos.com/v1 ServiceMonitor":
		once(m.serviceMonitor != nil)
		m.serviceMonitor = &monitoringv1.ServiceMonitor{}
		obj = m.serviceMonitor
	case "monitoring.coreos.com/v1 PodMonitor":
		once(m.podMonitor != nil)
		m.podMonitor = &monitoringv1.PodMonitor{}
		obj = m.podMonitor
	case "policy/v1 PodDisruptionBudget":
		once(m.pdb != nil)
		m.pdb = &policyv1.PodDisruptionBudget{}
		obj = m.pdb
	case "monitoring.coreos.com/v1 PrometheusRule":
		once(m.prometheusRule != nil)
		m.prometheusRule = &monitoringv1.PrometheusRule{}
		obj = m.prometheusRule
	default:
		t.Fatalf("%s: unexpected %s %s", file, tm.APIVersion, tm.Kind)
	}
	decodeStrict(t, file, b, obj)
}

// service is the Service that is not headless: the one named mcpwatch.
func (m manifests) service() *corev1.Service {
	for _, s := range m.services {
		if s.Spec.ClusterIP != corev1.ClusterIPNone {
			return s
		}
	}
	return nil
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEveryManifestIsInTheKustomization: a manifest left out is never
// applied. Each directory's kustomization.yaml lists every other YAML file
// of that directory.
func TestEveryManifestIsInTheKustomization(t *testing.T) {
	for _, dir := range []string{".", "common", "statefulset", "ha-pair", "sharded"} {
		var k kustomization
		decodeStrict(t, filepath.Join(dir, "kustomization.yaml"), read(t, filepath.Join(dir, "kustomization.yaml")), &k)
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range files {
			if b := filepath.Base(f); b != "kustomization.yaml" {
				names = append(names, b)
			}
		}
		var listed []string
		for _, r := range k.Resources {
			if strings.HasSuffix(r, ".yaml") {
				listed = append(listed, r)
			}
		}
		sort.Strings(names)
		sort.Strings(listed)
		if !slices.Equal(names, listed) {
			t.Errorf("%s: manifests %v, kustomization resources %v", dir, names, listed)
		}
	}
	load(t) // every listed file decodes strictly into its type
}

func TestStrictDecodingRejectsUnknownFields(t *testing.T) {
	b := strings.Replace(string(read(t, "deployment.yaml")), "  replicas: 1", "  replicas: 1\n  replica: 1", 1)
	var d appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(b), &d); err == nil || !strings.Contains(err.Error(), "replica") {
		t.Fatalf("a misspelt field decoded without error (%v): the manifest test would miss it", err)
	}
}

func TestDeployment(t *testing.T) {
	m := load(t)
	d := m.deployment
	if d.Spec.Selector == nil || !matches(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("selector %v does not match the pod labels %v", d.Spec.Selector, d.Spec.Template.Labels)
	}
	checkPod(t, d.Spec.Template.Spec)
}

// checkPod holds a pod of mcpwatch to the hardening every layout keeps (the
// kustomize ones and the Helm chart's): non-root, read-only, no capability,
// the health probes, resources, no subPath.
func checkPod(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Error("the pod must run as a non-root user (runAsNonRoot, runAsUser)")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("container has no securityContext")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem must be true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation must be false")
	case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL"):
		t.Error("capabilities must drop ALL")
	}
	if !slices.Contains(c.Args, "--config.file=/etc/mcpwatch/mcpwatch.yml") || c.Args[0] != "serve" {
		t.Errorf("args %q: want serve --config.file=/etc/mcpwatch/mcpwatch.yml", c.Args)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9713 {
		t.Fatalf("ports %v: want one, 9713", c.Ports)
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/-/healthy"}, {"readiness", c.ReadinessProbe, "/-/ready"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != c.Ports[0].Name {
			t.Errorf("%s probe: want GET %s on port %s", p.name, p.path, c.Ports[0].Name)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %v: want cpu and memory requests and a memory limit", c.Resources)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	for _, vm := range c.VolumeMounts {
		if _, ok := volumes[vm.Name]; !ok {
			t.Errorf("volumeMount %s has no volume", vm.Name)
		}
		if vm.SubPath != "" {
			t.Errorf("volumeMount %s uses subPath: the kubelet would never update a rotated secret in it", vm.Name)
		}
	}
}

// The names of the ConfigMap and the Secret the layouts read and the user
// creates: what the README's kubectl create commands and the example's
// generators name.
const (
	configMapName = "mcpwatch-config"
	secretName    = "mcpwatch-secrets"
)

// etcSources returns the sources of the projected volume the pod mounts at
// /etc/mcpwatch.
func etcSources(t *testing.T, pod corev1.PodSpec) []corev1.VolumeProjection {
	t.Helper()
	var volume string
	for _, vm := range pod.Containers[0].VolumeMounts {
		if vm.MountPath == "/etc/mcpwatch" {
			volume = vm.Name
		}
	}
	for _, v := range pod.Volumes {
		if v.Name == volume && v.Projected != nil {
			return v.Projected.Sources
		}
	}
	t.Fatal("no projected volume mounted at /etc/mcpwatch")
	return nil
}

// checkReadsUserData checks that a pod reads its configuration from the
// ConfigMap and its tokens from the Secret the user creates, named as given
// (kustomize renames generated ones), every key of each as a file of
// /etc/mcpwatch: no items list, which would tie the manifests to the keys
// of one example. The Secret is optional (a server whose token file is
// missing fails with reason config); the ConfigMap is not.
func checkReadsUserData(t *testing.T, pod corev1.PodSpec, configMap, secret string) {
	t.Helper()
	var haveConfig, haveSecret bool
	for _, src := range etcSources(t, pod) {
		switch {
		case src.ConfigMap != nil:
			haveConfig = true
			if src.ConfigMap.Name != configMap || len(src.ConfigMap.Items) > 0 || src.ConfigMap.Optional != nil && *src.ConfigMap.Optional {
				t.Errorf("projected ConfigMap %q (items %v, optional %v): want %q, whole and required", src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, configMap)
			}
		case src.Secret != nil:
			haveSecret = true
			if src.Secret.Name != secret || len(src.Secret.Items) > 0 || src.Secret.Optional == nil || !*src.Secret.Optional {
				t.Errorf("projected Secret %q (items %v, optional %v): want %q, whole and optional", src.Secret.Name, src.Secret.Items, src.Secret.Optional, secret)
			}
		default:
			t.Errorf("an unexpected source in /etc/mcpwatch: %+v", src)
		}
	}
	if !haveConfig || !haveSecret {
		t.Errorf("/etc/mcpwatch projects ConfigMap %v, Secret %v: want both", haveConfig, haveSecret)
	}
}

// TestLayoutsCarryNoUserData: applying a layout (kubectl apply -k) must
// never overwrite what the user owns, their configuration, lock and tokens,
// so no layout holds a ConfigMap or a Secret; the pods read the ones the
// user creates.
func TestLayoutsCarryNoUserData(t *testing.T) {
	for _, dir := range []string{".", "ha-pair", "sharded"} {
		t.Run(dir, func(t *testing.T) {
			m := loadTree(t, dir)
			if m.configMap != nil || m.secret != nil {
				t.Fatalf("the layout carries a ConfigMap (%v) or a Secret (%v): applying it would overwrite the user's", m.configMap != nil, m.secret != nil)
			}
			var pod corev1.PodSpec
			if m.deployment != nil {
				pod = m.deployment.Spec.Template.Spec
			} else {
				pod = m.statefulSet.Spec.Template.Spec
			}
			checkReadsUserData(t, pod, configMapName, secretName)
		})
	}
}

// exampleDir is the overlay that generates the ConfigMap and Secret from
// files, for a first try and as a model of the user's own.
const exampleDir = "../../examples/kubernetes"

// TestExampleConfigLoads loads the example overlay's mcpwatch.yml with the
// config package, parses its lock with the lock store, and checks that every
// ${file:...} it reads is a file the pod has: a key of the generated Secret
// (tokens) or ConfigMap, each a file of /etc/mcpwatch.
func TestExampleConfigLoads(t *testing.T) {
	var k kustomization
	decodeStrict(t, exampleDir, read(t, filepath.Join(exampleDir, "kustomization.yaml")), &k)
	if len(k.ConfigMapGenerator) != 1 || k.ConfigMapGenerator[0].Name != configMapName ||
		len(k.SecretGenerator) != 1 || k.SecretGenerator[0].Name != secretName {
		t.Fatalf("the example must generate ConfigMap %s and Secret %s: %+v %+v", configMapName, secretName, k.ConfigMapGenerator, k.SecretGenerator)
	}
	configFiles, secretFiles := k.ConfigMapGenerator[0].files(exampleDir), k.SecretGenerator[0].files(exampleDir)
	podFile := func(key string) string { return "/etc/mcpwatch/" + key }
	inPod := map[string]string{}
	for key := range configFiles {
		inPod[podFile(key)] = "configmap"
	}
	for key := range secretFiles {
		if inPod[podFile(key)] != "" {
			t.Errorf("key %s is in both the ConfigMap and the Secret: one file would hide the other", key)
		}
		inPod[podFile(key)] = "secret"
	}

	yml, ok := configFiles["mcpwatch.yml"]
	if !ok {
		t.Fatalf("the example's ConfigMap has no mcpwatch.yml: %v", configFiles)
	}
	cfg, err := config.Load(yml)
	if err != nil {
		t.Fatalf("%s: %v", yml, err)
	}
	if inPod[cfg.Lock] != "configmap" {
		t.Errorf("lock %s is not a ConfigMap file of the pod (%v)", cfg.Lock, inPod)
	}
	lockKey := strings.TrimPrefix(cfg.Lock, "/etc/mcpwatch/")
	lock, err := lockstore.Parse(read(t, configFiles[lockKey]))
	if err != nil {
		t.Fatalf("the example's lock: %v", err)
	}
	for _, s := range cfg.Servers {
		if _, ok := lock.Entry(s.Name); !ok {
			t.Errorf("server %s has no entry in the lock", s.Name)
		}
	}
	refs := regexp.MustCompile(`\$\{file:([^}]+)\}`).FindAllStringSubmatch(string(read(t, yml)), -1)
	if len(refs) == 0 {
		t.Fatal("mcpwatch.yml reads no token from a file; the Secret is unused")
	}
	for _, r := range refs {
		if inPod[r[1]] != "secret" {
			t.Errorf("${file:%s}: not a Secret file of the pod (files: %v)", r[1], inPod)
		}
	}
}

// TestImagePinned: every layout runs a released version (the newest in
// CHANGELOG.md), never a tag that moves such as latest.
func TestImagePinned(t *testing.T) {
	released := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\]`).FindSubmatch(read(t, "../../CHANGELOG.md"))
	if released == nil {
		t.Fatal("CHANGELOG.md names no released version (## [X.Y.Z] - DATE)")
	}
	want := "v" + string(released[1])
	for _, dir := range []string{".", "ha-pair", "sharded"} {
		var k kustomization
		decodeStrict(t, dir, read(t, filepath.Join(dir, "kustomization.yaml")), &k)
		if len(k.Images) != 1 {
			t.Fatalf("%s: images %+v: want the one image, pinned", dir, k.Images)
		}
		if img := k.Images[0]; img.NewTag != want {
			t.Errorf("%s: image %s:%s; want the latest release, %s", dir, img.NewName, img.NewTag, want)
		}
	}
}

func TestServiceAndServiceMonitor(t *testing.T) {
	m := load(t)
	svc, sm := m.service(), m.serviceMonitor
	// The operator names the job after the Service; the rules expect "mcpwatch".
	if svc.Name != "mcpwatch" {
		t.Errorf("Service %q: name it mcpwatch, the job the alert rules select", svc.Name)
	}
	if !matches(svc.Spec.Selector, m.deployment.Spec.Template.Labels) {
		t.Errorf("Service selector %v does not match the pod labels", svc.Spec.Selector)
	}
	if !matches(sm.Spec.Selector.MatchLabels, svc.Labels) {
		t.Errorf("ServiceMonitor selector %v does not match the Service labels %v", sm.Spec.Selector.MatchLabels, svc.Labels)
	}
	ports := map[string]bool{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = true
		if p.TargetPort.String() != m.deployment.Spec.Template.Spec.Containers[0].Ports[0].Name {
			t.Errorf("Service port %s targets %s, not the container's port", p.Name, p.TargetPort.String())
		}
	}
	for _, e := range sm.Spec.Endpoints {
		if !ports[e.Port] {
			t.Errorf("ServiceMonitor endpoint port %q is not a Service port", e.Port)
		}
	}
}

// TestPrometheusRuleHasEveryRule compares the PrometheusRule's groups with
// the rules file. (gen's test compares the bytes; this compares meaning.)
func TestPrometheusRuleHasEveryRule(t *testing.T) {
	m := load(t)
	var file struct {
		Groups []monitoringv1.RuleGroup `json:"groups"`
	}
	decodeStrict(t, "prometheus-alerts.yaml", read(t, "../../mixin/prometheus-alerts.yaml"), &file)
	if m.prometheusRule == nil {
		t.Fatal("no PrometheusRule")
	}
	got, want := m.prometheusRule.Spec.Groups, file.Groups
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%d groups, rules file has %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || len(got[i].Rules) != len(want[i].Rules) {
			t.Fatalf("group %d: %s with %d rules, want %s with %d", i, got[i].Name, len(got[i].Rules), want[i].Name, len(want[i].Rules))
		}
		for j := range want[i].Rules {
			g, w := got[i].Rules[j], want[i].Rules[j]
			if g.Alert != w.Alert || g.Expr.String() != w.Expr.String() || !ptrEqual(g.For, w.For) {
				t.Errorf("rule %s differs from the rules file", w.Alert)
			}
		}
	}
}

func ptrEqual[T comparable](a, b *T) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// matches reports whether selector selects labels.
func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
