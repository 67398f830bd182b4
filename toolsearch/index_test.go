package toolsearch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

// catalog is a synthetic MCP-sized catalog: 60 tools from a dozen services
// whose names and descriptions overlap the way real ones do (many create,
// list and get tools; several mention issues, messages or files).
func catalog(t *testing.T) []tools.Spec {
	t.Helper()
	rows := []struct{ name, desc, params string }{
		{"github_create_issue", "Create a new issue in a GitHub repository with a title and body.", "owner,repo,title,body,labels"},
		{"github_list_issues", "List issues of a GitHub repository, filtered by state or label.", "owner,repo,state,labels"},
		{"github_get_issue", "Get one issue of a GitHub repository by number.", "owner,repo,number"},
		{"github_create_pull_request", "Open a pull request from a branch in a GitHub repository.", "owner,repo,head,base,title"},
		{"github_merge_pull_request", "Merge an open pull request.", "owner,repo,number,method"},
		{"github_search_code", "Search source code across GitHub repositories.", "query,language"},
		{"gitlab_create_merge_request", "Open a merge request in a GitLab project.", "project,source_branch,target_branch,title"},
		{"gitlab_list_pipelines", "List CI pipelines of a GitLab project and their status.", "project,ref"},
		{"jira_create_ticket", "Create a Jira ticket in a project, with summary, description and priority.", "project,summary,description,priority"},
		{"jira_transition_ticket", "Move a Jira ticket to another workflow status such as Done.", "key,status"},
		{"jira_search", "Search Jira tickets with JQL.", "jql,max_results"},
		{"slack_post_message", "Post a message to a Slack channel.", "channel,text,thread_ts"},
		{"slack_list_channels", "List the Slack channels the bot can see.", "cursor,limit"},
		{"slack_read_thread", "Read the replies of a Slack thread.", "channel,thread_ts"},
		{"discord_send_message", "Send a message to a Discord channel through the bot.", "channel_id,content"},
		{"email_send", "Send an email to one or more recipients with a subject and body.", "to,cc,subject,body"},
		{"email_search_inbox", "Search the mailbox for emails by sender, subject or date.", "query,from,since"},
		{"getCalendarEvents", "Get the events of the user's calendar between two dates.", "start,end,calendar_id"},
		{"createCalendarEvent", "Schedule a meeting or event on the calendar and invite attendees.", "title,start,end,attendees"},
		{"postgres_query", "Run a read-only SQL query against the PostgreSQL database and return the rows.", "sql,params"},
		{"postgres_list_tables", "List the tables of the PostgreSQL database with their columns.", "schema"},
		{"mysql_execute", "Execute a SQL statement on the MySQL server.", "statement"},
		{"redis_get", "Get the value stored under a Redis key.", "key"},
		{"redis_set", "Set a Redis key to a value with an optional expiry.", "key,value,ttl_seconds"},
		{"mongo_find", "Find documents in a MongoDB collection matching a filter.", "collection,filter,limit"},
		{"s3_upload_object", "Upload a local file to an S3 bucket.", "bucket,key,path"},
		{"s3_list_objects", "List objects in an S3 bucket under a prefix.", "bucket,prefix"},
		{"s3_download_object", "Download an object from an S3 bucket to a local file.", "bucket,key,path"},
		{"k8s_list_pods", "List the pods of a Kubernetes namespace with their status.", "namespace,selector"},
		{"k8s_get_logs", "Fetch the logs of a Kubernetes pod's container.", "namespace,pod,container,tail"},
		{"k8s_apply_manifest", "Apply a Kubernetes YAML manifest to the cluster.", "manifest,namespace"},
		{"k8s_scale_deployment", "Scale a Kubernetes deployment to a number of replicas.", "namespace,deployment,replicas"},
		{"docker_list_containers", "List the running Docker containers on the host.", "all"},
		{"docker_build_image", "Build a Docker image from a Dockerfile.", "context,tag,dockerfile"},
		{"terraform_plan", "Run terraform plan in a directory and show the proposed infrastructure changes.", "dir,vars"},
		{"aws_describe_instances", "Describe EC2 instances in an AWS region.", "region,filters"},
		{"weather_forecast", "Weather forecast for a city: temperature, rain and wind for the next days.", "city,days"},
		{"weather_current", "Current weather conditions at a location.", "city"},
		{"maps_geocode", "Turn a street address into latitude and longitude coordinates.", "address"},
		{"maps_directions", "Driving, walking or transit directions between two places.", "origin,destination,mode"},
		{"translate_text", "Translate text from one language into another.", "text,source_lang,target_lang"},
		{"summarize_document", "Summarize a long document into a few paragraphs.", "document,max_words"},
		{"web_fetch", "Fetch a web page by URL and return it as markdown.", "url"},
		{"web_search", "Search the web and return the top results with titles and snippets.", "query,count"},
		{"browser_screenshot", "Take a screenshot of a web page in a headless browser.", "url,full_page"},
		{"pdf_extract_text", "Extract the text of a PDF file page by page.", "path,pages"},
		{"image_resize", "Resize an image to a given width and height.", "path,width,height"},
		{"ocr_image", "Recognize printed text in an image (OCR).", "path,language"},
		{"notion_create_page", "Create a page in a Notion workspace under a parent page.", "parent_id,title,content"},
		{"notion_search", "Search pages and databases in Notion.", "query"},
		{"confluence_get_page", "Get a Confluence wiki page by title or id.", "space,title"},
		{"sentry_list_errors", "List recent error events and crashes reported to Sentry for a project.", "project,since"},
		{"datadog_query_metrics", "Query Datadog metrics time series such as CPU or latency.", "query,from,to"},
		{"pagerduty_trigger_incident", "Trigger a PagerDuty incident to page the on-call engineer.", "service,summary,severity"},
		{"stripe_create_refund", "Refund a Stripe payment charge, fully or partly.", "charge_id,amount"},
		{"stripe_list_invoices", "List Stripe invoices of a customer.", "customer_id,status"},
		{"hubspot_create_contact", "Create a contact in the HubSpot CRM.", "email,first_name,last_name"},
		{"sheets_append_row", "Append a row of values to a Google Sheets spreadsheet.", "spreadsheet_id,sheet,values"},
		{"sheets_read_range", "Read a range of cells from a Google Sheets spreadsheet.", "spreadsheet_id,range"},
		{"HTTPRequestSend", "Send an arbitrary HTTP request with a method, headers and body.", "method,url,headers,body"},
	}
	var specs []tools.Spec
	for _, r := range rows {
		props := map[string]any{}
		for _, p := range strings.Split(r.params, ",") {
			props[p] = map[string]any{"type": "string"}
		}
		raw, err := json.Marshal(map[string]any{"type": "object", "properties": props})
		require.NoError(t, err)
		specs = append(specs, tools.Spec{Name: r.name, Description: r.desc, Parameters: raw})
	}
	require.Len(t, specs, 60)
	return specs
}

func specNames(specs []tools.Spec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return out
}

func TestSearchRanksTheRightToolFirst(t *testing.T) {
	t.Parallel()
	ix := New(catalog(t))
	cases := []struct{ query, want string }{
		{"create a github issue", "github_create_issue"},
		{"create a pull request from my branch", "github_create_pull_request"},
		{"send a message to a slack channel", "slack_post_message"},
		{"list kubernetes pods", "k8s_list_pods"},
		{"run an SQL query on postgres", "postgres_query"},
		{"what's the weather forecast for tomorrow in Paris", "weather_forecast"},
		{"calendar events next week", "getCalendarEvents"},
		{"schedule a meeting", "createCalendarEvent"},
		{"upload a file to s3", "s3_upload_object"},
		{"refund a payment", "stripe_create_refund"},
		{"page the on-call engineer", "pagerduty_trigger_incident"},
		{"logs of a pod", "k8s_get_logs"},
		{"translate into French", "translate_text"},
		{"recent crashes", "sentry_list_errors"},
		{"http request", "HTTPRequestSend"},
		{"jira_transition_ticket", "jira_transition_ticket"},
		// By parameter name alone: only one tool takes a spreadsheet_id and a range.
		{"spreadsheet range", "sheets_read_range"},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			t.Parallel()
			got := ix.Search(tc.query, 5)
			require.NotEmpty(t, got)
			require.Equal(t, tc.want, got[0].Name, "ranking: %v", specNames(got))
		})
	}
}

func TestSearchIsDeterministic(t *testing.T) {
	t.Parallel()
	specs := catalog(t)
	first := specNames(New(specs).Search("list", 60))
	require.Greater(t, len(first), 5, "many tools list something")
	for i := 0; i < 20; i++ {
		// A fresh index each time: map iteration order differs between
		// builds, and must not show in the ranking.
		require.Equal(t, first, specNames(New(specs).Search("list", 60)))
	}
	// Equal scores are ordered by name, not by catalog order: two tools
	// whose documents score the same, the later one first by name.
	twins := []tools.Spec{
		{Name: "y_ping", Description: "Ping the host."},
		{Name: "x_ping", Description: "Ping the host."},
	}
	require.Equal(t, []string{"x_ping", "y_ping"}, specNames(New(twins).Search("ping host", 5)))
}

func TestSearchBounds(t *testing.T) {
	t.Parallel()
	ix := New(catalog(t))
	require.Len(t, ix.Search("list", 3), 3)
	require.Empty(t, ix.Search("list", 0))
	require.Empty(t, ix.Search("list", -1))
	require.Empty(t, ix.Search("", 5))
	require.Empty(t, ix.Search("   ...  ", 5), "no searchable words")
	require.Empty(t, ix.Search("the of and", 5), "only stop words")
	require.Empty(t, ix.Search("xylophone", 5), "no tool matches: none, not the first k")
	require.Empty(t, New(nil).Search("list", 5))
}

func TestSearchCopiesSpecs(t *testing.T) {
	t.Parallel()
	specs := catalog(t)
	ix := New(specs)
	specs[0] = tools.Spec{Name: "replaced"}
	require.Equal(t, "github_create_issue", ix.Search("create github issue", 1)[0].Name)
}

func TestWords(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"getCalendarEvents":          {"get", "calendar", "event"},
		"HTTPRequestSend":            {"http", "request", "send"},
		"github_create_pull-request": {"github", "creat", "pull", "request"},
		"Lists the files":            {"list", "file"},
		"creating created creates":   {"creat", "creat", "creat"},
		"processes boxes queries":    {"process", "box", "query"},
		"k8s ec2 s3":                 {"k8s", "ec2", "s3"},
	}
	for in, want := range cases {
		require.Equal(t, want, words(in), in)
	}
}

func TestSchemaText(t *testing.T) {
	t.Parallel()
	raw := json.RawMessage(`{"type":"object","properties":{
		"repo":{"type":"string","description":"owner/name"},
		"labels":{"type":"array","items":{"type":"object","properties":{"color":{"type":"string"}}}},
		"assignee":{"type":"object","properties":{"login":{"type":"string"}}}}}`)
	require.Equal(t, []string{"assignee", "login", "labels", "color", "repo", "owner/name"}, schemaText(raw))
	require.Empty(t, schemaText(json.RawMessage(`not json`)))
	require.Empty(t, schemaText(nil))
}

func TestSearchSpec(t *testing.T) {
	t.Parallel()
	s := SearchSpec()
	require.Equal(t, "tool_search", s.Name)
	require.Contains(t, s.Description, "many more exist")
	require.Contains(t, s.Description, "next turn")
	require.True(t, s.ReadOnly)
	for args, ok := range map[string]bool{
		`{"query":"create issue"}`:            true,
		`{"query":"create issue","limit":20}`: true,
		`{"query":"create issue","limit":21}`: false,
		`{"query":"create issue","limit":0}`:  false,
		`{"limit":5}`:                         false,
		`{"query":""}`:                        false,
		`{"query":"x","extra":1}`:             false,
	} {
		err := tools.ValidateArguments(s, args)
		require.Equal(t, ok, err == nil, fmt.Sprintf("%s: %v", args, err))
	}
	require.Equal(t, MaxLimit, 20)
}
