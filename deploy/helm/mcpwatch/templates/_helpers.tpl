{{/* The chart's name, and the name of its objects: the release's, with the chart's name added
unless the release's already holds it ("mcpwatch" stays "mcpwatch"). */}}
{{- define "mcpwatch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mcpwatch.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "mcpwatch.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "mcpwatch.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "mcpwatch.headless" -}}
{{- printf "%s-headless" (include "mcpwatch.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mcpwatch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcpwatch.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mcpwatch.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mcpwatch.selectorLabels" . }}
app.kubernetes.io/version: {{ include "mcpwatch.tag" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mcpwatch
{{- end }}

{{/* The layout, checked: a misspelt one fails the install rather than run something else. */}}
{{- define "mcpwatch.layout" -}}
{{- if not (has .Values.layout (list "single" "ha-pair" "sharded")) }}
{{- fail (printf "layout %q: use single, ha-pair or sharded" .Values.layout) }}
{{- end }}
{{- if and (eq .Values.layout "sharded") (lt (int .Values.shards) 2) }}
{{- fail (printf "shards %v: the sharded layout needs 2 or more (layout: single runs one replica)" .Values.shards) }}
{{- end }}
{{- .Values.layout }}
{{- end }}

{{- define "mcpwatch.replicas" -}}
{{- $layout := include "mcpwatch.layout" . }}
{{- if eq $layout "single" }}1{{ else if eq $layout "ha-pair" }}2{{ else }}{{ int .Values.shards }}{{ end }}
{{- end }}

{{- define "mcpwatch.tag" -}}
{{- default .Chart.AppVersion .Values.image.tag }}{{ if .Values.image.stdio }}-stdio{{ end }}
{{- end }}

{{- define "mcpwatch.image" -}}
{{- .Values.image.repository }}:{{ include "mcpwatch.tag" . }}{{ with .Values.image.digest }}@{{ . }}{{ end }}
{{- end }}

{{- define "mcpwatch.configMap" -}}
{{- if .Values.configFiles }}{{ printf "%s-config" (include "mcpwatch.fullname" .) }}{{ else }}{{ required "existingConfigMap: name the ConfigMap holding mcpwatch.yml (or give configFiles)" .Values.existingConfigMap }}{{ end }}
{{- end }}

{{/* The pod template every layout runs: one container, non-root, read-only, no capability,
reading /etc/mcpwatch from the ConfigMap and the Secrets. */}}
{{- define "mcpwatch.podTemplate" -}}
{{- $layout := include "mcpwatch.layout" . }}
{{- $replicas := int (include "mcpwatch.replicas" .) -}}
metadata:
  labels:
    {{- include "mcpwatch.selectorLabels" . | nindent 4 }}
    {{- with .Values.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- /* configFiles changed by an upgrade roll the pods, which read the new configuration at start. */}}
  {{- if or .Values.configFiles .Values.podAnnotations }}
  annotations:
    {{- if .Values.configFiles }}
    checksum/config: {{ toYaml .Values.configFiles | sha256sum }}
    {{- end }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
spec:
  automountServiceAccountToken: false
  enableServiceLinks: false
  {{- with .Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  securityContext:
    {{- toYaml .Values.podSecurityContext | nindent 4 }}
  {{- if .Values.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml .Values.topologySpreadConstraints | nindent 4 }}
  {{- else if ne $layout "single" }}
  # Replicas on different nodes where the cluster has them: a node failure takes one replica of
  # a pair, or one shard, not all.
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: kubernetes.io/hostname
      whenUnsatisfiable: ScheduleAnyway
      labelSelector:
        matchLabels:
          {{- include "mcpwatch.selectorLabels" . | nindent 10 }}
  {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  containers:
    - name: mcpwatch
      image: {{ include "mcpwatch.image" . }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args:
        - serve
        - --config.file=/etc/mcpwatch/mcpwatch.yml
        # All interfaces inside the pod, so the Service reaches it.
        - --web.listen-address=:9713
        - --log.format=json
        {{- if eq $layout "sharded" }}
        - --shard.total={{ $replicas }}
        - --shard.from-pod-name=$(POD_NAME)
        {{- end }}
        {{- if ne $layout "single" }}
        {{- $fullname := include "mcpwatch.fullname" . }}
        {{- $headless := include "mcpwatch.headless" . }}
        {{- $peers := list }}
        {{- range $i := until $replicas }}
        {{- $peers = append $peers (printf "http://%s-%d.%s:9713/" $fullname $i $headless) }}
        {{- end }}
        - --web.peer-urls={{ join "," $peers }}
        {{- end }}
        {{- with .Values.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      ports:
        - name: http-metrics
          containerPort: 9713
          protocol: TCP
      env:
        # stdio MCP servers (if any are configured) keep caches in HOME.
        - name: HOME
          value: /var/lib/mcpwatch
        {{- if ne $layout "single" }}
        # The pod's name: its ordinal moves the probes' phases (a pair probes half an interval
        # apart) and, with --shard.from-pod-name, picks the shard.
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        {{- end }}
        {{- with .Values.env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      livenessProbe:
        httpGet:
          path: /-/healthy
          port: http-metrics
        periodSeconds: 10
        timeoutSeconds: 5
        failureThreshold: 3
      readinessProbe:
        # Ready after the first round of probes (or its timeout).
        httpGet:
          path: /-/ready
          port: http-metrics
        periodSeconds: 5
        timeoutSeconds: 5
        failureThreshold: 3
      resources:
        {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: etc
          mountPath: /etc/mcpwatch
          readOnly: true
        - name: state
          mountPath: /var/lib/mcpwatch
        - name: tmp
          mountPath: /tmp
  volumes:
    # /etc/mcpwatch: every key of the ConfigMap and of each Secret, as a file. No subPath, so the
    # kubelet updates a rotated Secret in place and mcpwatch reads it at the next probe.
    - name: etc
      projected:
        defaultMode: 0440
        sources:
          - configMap:
              name: {{ include "mcpwatch.configMap" . }}
          {{- range .Values.secrets }}
          - secret:
              name: {{ required "secrets: each needs a name" .name }}
              {{- if .optional }}
              optional: true
              {{- end }}
          {{- end }}
    - name: state
      emptyDir:
        sizeLimit: {{ .Values.stateSizeLimit }}
    - name: tmp
      emptyDir:
        sizeLimit: {{ .Values.tmpSizeLimit }}
{{- end }}
