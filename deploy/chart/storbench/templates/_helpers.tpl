{{/* The objects' base name: the release's name, with "storbench" added unless it holds it. */}}
{{- define "storbench.fullname" -}}
{{- if contains "storbench" .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-storbench" .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "storbench.labels" -}}
app.kubernetes.io/part-of: storbench
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "storbench.tag" -}}
{{- .Values.image.tag | default .Chart.AppVersion -}}
{{- end -}}

{{- define "storbench.image" -}}
{{- printf "%s/%s:%s" .Values.image.registry .Values.image.repository (include "storbench.tag" .) -}}
{{- end -}}

{{/* The fio image's --image flag, empty when it is what storbench uses anyway (ghcr.io/storbench/storbench-fio at its own version). */}}
{{- define "storbench.fioImageArg" -}}
{{- if .Values.fioImage.override -}}
--image={{ .Values.fioImage.override }}
{{- else if or (ne .Values.image.registry "ghcr.io/storbench") (ne .Values.fioImage.repository "storbench-fio") .Values.image.tag -}}
--image={{ printf "%s/%s:%s" .Values.image.registry .Values.fioImage.repository (include "storbench.tag" .) }}
{{- end -}}
{{- end -}}
