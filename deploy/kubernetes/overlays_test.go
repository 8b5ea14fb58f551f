package kubernetes_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mcpwatch/mcpwatch/internal/testtool"
)

// The overlays that run mcpwatch as a StatefulSet, and their replicas.
var overlays = map[string]int{"ha-pair": 2, "sharded": 3}

// TestStatefulSetComponent checks the StatefulSet layout as written: its pod
// template is the Deployment's (plus POD_NAME and a spread over nodes), its
// headless Service governs it, the PodMonitor scrapes its pods as job
// "mcpwatch" and the PodDisruptionBudget covers them.
func TestStatefulSetComponent(t *testing.T) {
	base := load(t)
	for dir := range overlays {
		t.Run(dir, func(t *testing.T) {
			m := loadTree(t, dir)
			checkStatefulSetLayout(t, base.deployment, m)
		})
	}
}

func checkStatefulSetLayout(t *testing.T, deployment *appsv1.Deployment, m manifests) {
	t.Helper()
	sts, pm, pdb := m.statefulSet, m.podMonitor, m.pdb
	if sts == nil || pm == nil || pdb == nil || m.prometheusRule == nil {
		t.Fatalf("lacks one of StatefulSet, PodMonitor, PodDisruptionBudget, PrometheusRule")
	}
	if m.configMap != nil || m.secret != nil {
		t.Errorf("carries a ConfigMap or a Secret: applying it would overwrite the user's")
	}
	if m.deployment != nil || m.serviceMonitor != nil {
		t.Errorf("has a Deployment or a ServiceMonitor besides the StatefulSet: every pod would be run or scraped twice")
	}

	// The pod template is the Deployment's, plus POD_NAME and the spread.
	tmpl := sts.Spec.Template.DeepCopy()
	c := &tmpl.Spec.Containers[0]
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "POD_NAME" })
	if i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil || c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("no env POD_NAME from the downward API's metadata.name")
	} else {
		c.Env = slices.Delete(c.Env, i, i+1)
	}
	if len(tmpl.Spec.TopologySpreadConstraints) == 0 {
		t.Error("no topologySpreadConstraints: both replicas of a pair may land on one node")
	}
	tmpl.Spec.TopologySpreadConstraints = nil
	if !reflect.DeepEqual(*tmpl, stripArgs(deployment.Spec.Template, sts.Spec.Template)) {
		t.Errorf("the StatefulSet's pod template drifted from deployment.yaml's (keep statefulset/statefulset.yaml in step)")
	}

	labels := sts.Spec.Template.Labels
	if sts.Spec.Selector == nil || !matches(sts.Spec.Selector.MatchLabels, labels) {
		t.Errorf("selector %v does not match the pod labels %v", sts.Spec.Selector, labels)
	}
	var headless *corev1.Service
	for _, s := range m.services {
		if s.Name == sts.Spec.ServiceName {
			headless = s
		}
	}
	if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone || !matches(headless.Spec.Selector, labels) {
		t.Errorf("serviceName %q is not a headless Service selecting the pods", sts.Spec.ServiceName)
	}
	port := sts.Spec.Template.Spec.Containers[0].Ports[0].Name
	if !matches(pm.Spec.Selector.MatchLabels, labels) || len(pm.Spec.PodMetricsEndpoints) != 1 ||
		pm.Spec.PodMetricsEndpoints[0].Port == nil || *pm.Spec.PodMetricsEndpoints[0].Port != port {
		t.Errorf("the PodMonitor does not scrape port %s of the pods %v", port, labels)
	}
	// The operator names the job after the pod label jobLabel names; the
	// rules select job="mcpwatch".
	if job := labels[pm.Spec.JobLabel]; job != "mcpwatch" {
		t.Errorf("PodMonitor jobLabel %q gives job %q, the rules select job=\"mcpwatch\"", pm.Spec.JobLabel, job)
	}
	if pdb.Spec.Selector == nil || !matches(pdb.Spec.Selector.MatchLabels, labels) ||
		pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("the PodDisruptionBudget must let one pod of %v go at a time", labels)
	}
}

// stripArgs returns base with the container args of got: the overlays add
// flags, which TestOverlaysRender checks on the rendered output.
func stripArgs(base, got corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	out := *base.DeepCopy()
	out.Spec.Containers[0].Args = got.Spec.Containers[0].Args
	return out
}

// kustomizeTool returns a command that renders a kustomization: kustomize,
// or kubectl kustomize from a kubectl that embeds kustomize v4 or later
// (Components and `labels:`; Debian bookworm's kubernetes-client, 1.20, is
// older). Without one the test is skipped, saying so: the overlays are then
// checked as written only.
func kustomizeTool(t *testing.T) []string {
	t.Helper()
	if p, err := exec.LookPath("kustomize"); err == nil {
		return []string{p, "build"}
	}
	p := testtool.Optional(t, "kubectl", "kubernetes-client")
	out, err := exec.Command(p, "version", "--client", "-o", "json").Output()
	var v struct {
		KustomizeVersion string `json:"kustomizeVersion"`
	}
	if err == nil {
		err = json.Unmarshal(out, &v)
	}
	major, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(v.KustomizeVersion, ".", 2)[0], "v"))
	if err != nil || major < 4 {
		t.Skipf("SKIPPED: %s embeds kustomize %q, older than v4 (%v): install kustomize or kubectl 1.24 or later", p, v.KustomizeVersion, err)
	}
	return []string{p, "kustomize"}
}

// render runs kustomize on dir and decodes every object of its output
// strictly.
func render(t *testing.T, tool []string, dir string) manifests {
	t.Helper()
	cmd := exec.Command(tool[0], append(tool[1:], dir)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", strings.Join(tool, " "), dir, err, errOut.String())
	}
	var m manifests
	for i, doc := range strings.Split(out.String(), "\n---\n") {
		m.addFile(t, fmt.Sprintf("%s (rendered, object %d)", dir, i), []byte(doc))
	}
	return m
}

// TestOverlaysRender renders every layout with kustomize and checks what
// would be applied: the flags each replica runs with, the replicas against
// the shards, the peer URLs against the pods, one scrape per pod.
func TestOverlaysRender(t *testing.T) {
	tool := kustomizeTool(t)
	base := render(t, tool, ".")
	if base.deployment == nil || base.serviceMonitor == nil || base.statefulSet != nil || base.podMonitor != nil {
		t.Errorf("the base renders without its Deployment and ServiceMonitor, or with a StatefulSet")
	}
	if base.configMap != nil || base.secret != nil {
		t.Errorf("the base renders a ConfigMap or a Secret: kubectl apply -k would overwrite the user's")
	}
	checkReadsUserData(t, base.deployment.Spec.Template.Spec, configMapName, secretName)
	t.Run("example", func(t *testing.T) {
		// The example generates both, and kustomize points the pod at the
		// generated (hash-suffixed) names.
		m := render(t, tool, exampleDir)
		if m.configMap == nil || m.secret == nil || m.deployment == nil {
			t.Fatal("the example renders without its ConfigMap, Secret or Deployment")
		}
		for _, name := range []string{m.configMap.Name, m.secret.Name} {
			if !regexp.MustCompile(`^(` + configMapName + `|` + secretName + `)-[a-z0-9]+$`).MatchString(name) {
				t.Errorf("generated %q: want a name with a content hash, which no apply of the base can overwrite", name)
			}
		}
		checkReadsUserData(t, m.deployment.Spec.Template.Spec, m.configMap.Name, m.secret.Name)
		if _, ok := m.secret.Data["report-token"]; !ok {
			t.Errorf("the example's Secret has no report-token: %v", m.secret.Data)
		}
	})
	for dir, replicas := range overlays {
		t.Run(dir, func(t *testing.T) {
			m := render(t, tool, dir)
			checkStatefulSetLayout(t, base.deployment, m)
			sts := m.statefulSet
			if sts.Spec.Replicas == nil || int(*sts.Spec.Replicas) != replicas {
				t.Fatalf("replicas %v, want %d", sts.Spec.Replicas, replicas)
			}
			c := sts.Spec.Template.Spec.Containers[0]
			if c.Image != base.deployment.Spec.Template.Spec.Containers[0].Image {
				t.Errorf("image %q, the base's is %q", c.Image, base.deployment.Spec.Template.Spec.Containers[0].Image)
			}
			flags := map[string]string{}
			for _, a := range c.Args[1:] {
				k, v, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				flags[k] = v
			}
			// Each pod links every pod by its stable name.
			var peers []string
			for u := range strings.SplitSeq(flags["web.peer-urls"], ",") {
				p, err := url.Parse(u)
				if err != nil {
					t.Fatalf("peer URL %q: %v", u, err)
				}
				peers = append(peers, p.Host)
			}
			var want []string
			for i := range replicas {
				want = append(want, fmt.Sprintf("%s-%d.%s:9713", sts.Name, i, sts.Spec.ServiceName))
			}
			if !slices.Equal(peers, want) {
				t.Errorf("--web.peer-urls hosts %v, want %v", peers, want)
			}
			switch dir {
			case "sharded":
				if total, err := strconv.Atoi(flags["shard.total"]); err != nil || total != replicas {
					t.Errorf("--shard.total=%q with %d replicas: each ordinal must be a shard", flags["shard.total"], replicas)
				}
				if flags["shard.from-pod-name"] != "$(POD_NAME)" {
					t.Errorf("--shard.from-pod-name=%q, want $(POD_NAME)", flags["shard.from-pod-name"])
				}
			case "ha-pair":
				for k := range flags {
					if strings.HasPrefix(k, "shard.") || k == "replica" {
						t.Errorf("the pair sets --%s: both replicas must probe every server, named by their pods", k)
					}
				}
			}
			for _, obj := range []map[string]string{sts.Labels, m.podMonitor.Labels, m.pdb.Labels} {
				if obj["app.kubernetes.io/part-of"] != "mcpwatch" {
					t.Errorf("an object lacks the label app.kubernetes.io/part-of=mcpwatch: %v", obj)
				}
			}
		})
	}
}
