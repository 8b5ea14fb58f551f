package kubernetes_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
)

// chart is the Helm chart, which runs the same pods as the kustomize layouts.
const chart = "../helm/mcpwatch"

// helm runs the Helm this module pins as a Go tool (go.mod's tool
// directive: `go tool helm` builds it from helm.sh/helm/v3 on first use and
// caches it), so no Helm binary is downloaded.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"tool", "helm"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return out.String() + errOut.String(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

// kubeVersion is the cluster's version helm template assumes: a Helm built
// as a Go tool has none stamped in (it would say 1.20, which the chart's
// kubeVersion refuses).
const kubeVersion = "--kube-version=1.31.0"

// helmLayouts are the chart's layouts with the values that choose them.
var helmLayouts = []struct {
	name     string
	set      []string
	replicas int
}{
	{"single", nil, 1},
	{"ha-pair", []string{"layout=ha-pair"}, 2},
	{"sharded", []string{"layout=sharded"}, 3},
	{"sharded-5", []string{"layout=sharded", "shards=5"}, 5},
}

func setArgs(set []string) []string {
	var args []string
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return args
}

// renderHelm runs helm template with the values given and decodes every
// object strictly into its type, as the kustomize layouts are.
func renderHelm(t *testing.T, release string, set ...string) manifests {
	t.Helper()
	out, err := helm(t, append([]string{"template", release, chart, "--namespace", "mcpwatch", kubeVersion}, setArgs(set)...)...)
	if err != nil {
		t.Fatal(err)
	}
	var m manifests
	for i, doc := range strings.Split(strings.TrimPrefix(out, "---\n"), "\n---\n") {
		m.addFile(t, fmt.Sprintf("helm template %v (object %d)", set, i), []byte(doc))
	}
	return m
}

// helm lint --strict passes for every layout, with the monitors on; a
// layout that does not exist, or one shard, is refused by helm template (as
// by helm install), naming the choices: lint runs templates in a mode where
// fail only informs.
func TestHelmLint(t *testing.T) {
	for _, l := range helmLayouts {
		set := append(slices.Clone(l.set), "serviceMonitor.enabled=true", "prometheusRule.enabled=true")
		out, err := helm(t, append([]string{"lint", "--strict", chart, kubeVersion}, setArgs(set)...)...)
		if err != nil || !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
			t.Errorf("%s: %v\n%s", l.name, err, out)
		}
	}
	if _, err := helm(t, "template", "x", chart, kubeVersion, "--set", "layout=pair"); err == nil || !strings.Contains(err.Error(), `layout "pair": use single, ha-pair or sharded`) {
		t.Errorf("template of layout=pair: %v", err)
	}
	if _, err := helm(t, "template", "x", chart, kubeVersion, "--set", "layout=sharded", "--set", "shards=1"); err == nil || !strings.Contains(err.Error(), "needs 2 or more") {
		t.Errorf("template of one shard: %v", err)
	}
}

// podTemplate is a pod template with what the chart and the kustomize
// layouts may set differently taken out: labels (Helm's standard ones, and
// the release), the image (kustomize sets it at build), its pull policy, the
// flags (checked apart) and the spread's selector (the same labels).
func podTemplate(p corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	p = *p.DeepCopy()
	p.Labels, p.Annotations = nil, nil
	c := &p.Spec.Containers[0]
	c.Image, c.ImagePullPolicy, c.Args = "", "", nil
	for i := range p.Spec.TopologySpreadConstraints {
		p.Spec.TopologySpreadConstraints[i].LabelSelector = nil
	}
	return p
}

// flags returns a container's flags after serve, as name=value.
func flags(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, a := range c.Args[1:] {
		k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		out[k] = v
	}
	return out
}

// Each layout of the chart renders, decodes strictly, and runs the very
// pods of the kustomize layouts: the same hardening, the same pod template
// (labels, image and flags aside), the same flags per layout, reading the
// ConfigMap and Secret the user creates; the chart makes no Secret and, by
// default, no ConfigMap.
func TestHelmTemplate(t *testing.T) {
	base := loadTree(t, ".")
	stsBase := loadTree(t, "statefulset")
	alerts := loadTree(t, "common").prometheusRule
	version := releasedVersion(t)
	for _, l := range helmLayouts {
		t.Run(l.name, func(t *testing.T) {
			m := renderHelm(t, "mcpwatch", append(slices.Clone(l.set), "serviceMonitor.enabled=true", "prometheusRule.enabled=true")...)
			if m.secret != nil || m.configMap != nil {
				t.Fatalf("the chart renders a Secret (%v) or a ConfigMap (%v): credentials come from Secrets the user creates, the configuration from theirs", m.secret != nil, m.configMap != nil)
			}
			var tmpl corev1.PodTemplateSpec
			var want corev1.PodTemplateSpec
			if l.replicas == 1 {
				if m.deployment == nil || m.statefulSet != nil || m.pdb != nil {
					t.Fatal("single: want a Deployment alone")
				}
				d := m.deployment
				if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != base.deployment.Spec.Strategy.Type || !matches(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
					t.Errorf("Deployment: replicas %d, strategy %s, selector %v", *d.Spec.Replicas, d.Spec.Strategy.Type, d.Spec.Selector)
				}
				tmpl, want = d.Spec.Template, base.deployment.Spec.Template
			} else {
				if m.statefulSet == nil || m.deployment != nil {
					t.Fatal("want a StatefulSet alone")
				}
				s := m.statefulSet
				if int(*s.Spec.Replicas) != l.replicas || s.Spec.PodManagementPolicy != stsBase.statefulSet.Spec.PodManagementPolicy || !matches(s.Spec.Selector.MatchLabels, s.Spec.Template.Labels) {
					t.Errorf("StatefulSet: replicas %d (want %d), policy %s", *s.Spec.Replicas, l.replicas, s.Spec.PodManagementPolicy)
				}
				var headless *corev1.Service
				for _, svc := range m.services {
					if svc.Name == s.Spec.ServiceName {
						headless = svc
					}
				}
				if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone || !matches(headless.Spec.Selector, s.Spec.Template.Labels) {
					t.Errorf("serviceName %q is not a headless Service of the pods", s.Spec.ServiceName)
				}
				if m.pdb == nil || m.pdb.Spec.MaxUnavailable.IntValue() != 1 || !matches(m.pdb.Spec.Selector.MatchLabels, s.Spec.Template.Labels) {
					t.Error("want a PodDisruptionBudget letting one pod go at a time")
				}
				f := flags(s.Spec.Template.Spec.Containers[0])
				var peers []string
				for i := range l.replicas {
					peers = append(peers, fmt.Sprintf("http://%s-%d.%s:9713/", s.Name, i, s.Spec.ServiceName))
				}
				if f["web.peer-urls"] != strings.Join(peers, ",") {
					t.Errorf("--web.peer-urls=%s, want %s", f["web.peer-urls"], strings.Join(peers, ","))
				}
				sharded := strings.HasPrefix(l.name, "sharded")
				if sharded && (f["shard.total"] != fmt.Sprint(l.replicas) || f["shard.from-pod-name"] != "$(POD_NAME)") {
					t.Errorf("sharded: --shard.total=%q --shard.from-pod-name=%q, want %d and $(POD_NAME)", f["shard.total"], f["shard.from-pod-name"], l.replicas)
				}
				if !sharded && (f["shard.total"] != "" || f["replica"] != "") {
					t.Error("the pair sets a shard or a replica name: both replicas must probe every server")
				}
				tmpl, want = s.Spec.Template, stsBase.statefulSet.Spec.Template
			}
			pod := tmpl.Spec
			checkPod(t, pod)
			checkReadsUserData(t, pod, configMapName, secretName)
			if got, w := podTemplate(tmpl), podTemplate(want); !reflect.DeepEqual(got, w) {
				t.Errorf("the pod template differs from the kustomize layout's beyond labels, image and flags:\n helm      %+v\n kustomize %+v", got.Spec, w.Spec)
			}
			c := pod.Containers[0]
			if img := "ghcr.io/mcpwatch/mcpwatch:v" + version; c.Image != img {
				t.Errorf("image %s, want the newest release, %s", c.Image, img)
			}
			if got, w := c.Args[:4], want.Spec.Containers[0].Args[:4]; !slices.Equal(got, w) {
				t.Errorf("args %q, the kustomize layout's %q", got, w)
			}

			// One ServiceMonitor through the metrics Service only (the
			// headless one would scrape every pod twice), as job mcpwatch.
			sm := m.serviceMonitor
			if sm == nil || m.podMonitor != nil {
				t.Fatal("want a ServiceMonitor, and no PodMonitor")
			}
			var scraped []string
			for _, svc := range m.services {
				if matches(sm.Spec.Selector.MatchLabels, svc.Labels) {
					scraped = append(scraped, svc.Name)
					if job := svc.Labels[sm.Spec.JobLabel]; job != "mcpwatch" {
						t.Errorf("jobLabel %q gives job %q, the rules select job=\"mcpwatch\"", sm.Spec.JobLabel, job)
					}
					if svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.Ports[0].Name != sm.Spec.Endpoints[0].Port {
						t.Errorf("the ServiceMonitor scrapes %s (headless, or another port)", svc.Name)
					}
				}
			}
			if len(scraped) != 1 {
				t.Errorf("the ServiceMonitor selects Services %v, want the metrics Service alone", scraped)
			}
			checkRulesAre(t, m.prometheusRule, alerts.Spec.Groups)
		})
	}
}

// releasedVersion is the newest release in CHANGELOG.md.
func releasedVersion(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\]`).FindSubmatch(read(t, "../../CHANGELOG.md"))
	if m == nil {
		t.Fatal("CHANGELOG.md names no released version")
	}
	return string(m[1])
}

// checkRulesAre compares a PrometheusRule's groups with want, rule by rule.
func checkRulesAre(t *testing.T, pr *monitoringv1.PrometheusRule, want []monitoringv1.RuleGroup) {
	t.Helper()
	if pr == nil {
		t.Fatal("no PrometheusRule")
	}
	got := pr.Spec.Groups
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%d rule groups, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || !reflect.DeepEqual(got[i].Rules, want[i].Rules) {
			t.Errorf("rule group %s differs from the mixin's", want[i].Name)
		}
	}
}

// The values a user sets: the stdio image, a digest, another release name,
// the configuration given in values (a ConfigMap the chart makes), more
// Secrets and variables from them, the recording rules; never a Secret.
func TestHelmValues(t *testing.T) {
	version := releasedVersion(t)
	m := renderHelm(t, "team-a", "layout=ha-pair", "image.stdio=true", "image.digest=sha256:"+strings.Repeat("ab", 32),
		"configFiles.mcpwatch\\.yml=servers: {}", "secrets[0].name=github", "secrets[1].name=slack", "secrets[1].optional=true",
		"env[0].name=GITHUB_TOKEN", "env[0].valueFrom.secretKeyRef.name=github", "env[0].valueFrom.secretKeyRef.key=token",
		"prometheusRule.enabled=true", "prometheusRule.recordingRules=true")
	if m.secret != nil {
		t.Fatal("the chart renders a Secret")
	}
	s := m.statefulSet
	if s == nil || s.Name != "team-a-mcpwatch" || s.Spec.ServiceName != "team-a-mcpwatch-headless" {
		t.Fatalf("names for release team-a: %+v", s)
	}
	c := s.Spec.Template.Spec.Containers[0]
	if want := "ghcr.io/mcpwatch/mcpwatch:v" + version + "-stdio@sha256:" + strings.Repeat("ab", 32); c.Image != want {
		t.Errorf("image %s, want %s", c.Image, want)
	}
	if f := flags(c); !strings.HasPrefix(f["web.peer-urls"], "http://team-a-mcpwatch-0.team-a-mcpwatch-headless:9713/,") {
		t.Errorf("peer URLs %s", f["web.peer-urls"])
	}
	if m.configMap == nil || m.configMap.Name != "team-a-mcpwatch-config" || m.configMap.Data["mcpwatch.yml"] != "servers: {}" {
		t.Fatalf("configFiles: ConfigMap %+v", m.configMap)
	}
	if s.Spec.Template.Annotations["checksum/config"] == "" {
		t.Error("no checksum/config annotation: an upgrade with new configFiles would not roll the pods")
	}
	var secrets []string
	for _, src := range etcSources(t, s.Spec.Template.Spec) {
		switch {
		case src.ConfigMap != nil && src.ConfigMap.Name != m.configMap.Name:
			t.Errorf("reads ConfigMap %s, not the chart's", src.ConfigMap.Name)
		case src.Secret != nil:
			secrets = append(secrets, fmt.Sprintf("%s optional=%v", src.Secret.Name, src.Secret.Optional != nil && *src.Secret.Optional))
		}
	}
	if want := []string{"github optional=false", "slack optional=true"}; !slices.Equal(secrets, want) {
		t.Errorf("Secrets %v, want %v", secrets, want)
	}
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GITHUB_TOKEN" })
	if i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.SecretKeyRef == nil || c.Env[i].ValueFrom.SecretKeyRef.Name != "github" {
		t.Errorf("env %+v: want GITHUB_TOKEN from the Secret github", c.Env)
	}
	if g := m.prometheusRule.Spec.Groups; len(g) == 0 || g[len(g)-1].Name != "mcpwatch.fleet" || g[len(g)-1].Rules[0].Record == "" {
		t.Errorf("recordingRules: the last group is not the mixin's recording rules: %v", g[len(g)-1].Name)
	}
}

// The monitors are off unless asked for: a cluster without the
// prometheus-operator has no ServiceMonitor or PrometheusRule kind.
func TestHelmDefaults(t *testing.T) {
	m := renderHelm(t, "mcpwatch")
	if m.serviceMonitor != nil || m.prometheusRule != nil || m.podMonitor != nil {
		t.Error("the defaults render a ServiceMonitor, PodMonitor or PrometheusRule")
	}
	if m.deployment == nil || m.service() == nil {
		t.Error("the defaults render no Deployment or Service")
	}
}
