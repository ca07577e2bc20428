package aad

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/entitlements-go/entitlements/config"
	"github.com/entitlements-go/entitlements/internal/redact"
	"github.com/entitlements-go/entitlements/providers/aadspec"
)

// Environment variables of the credential kinds (README "Credentials").
const (
	envTenant          = "AZURE_TENANT_ID"
	envClient          = "AZURE_CLIENT_ID"
	envSecret          = "AZURE_CLIENT_SECRET"
	envCertPassword    = "AZURE_CLIENT_CERTIFICATE_PASSWORD"
	envFederatedFile   = "AZURE_FEDERATED_TOKEN_FILE"
	envActionsTokenURL = "ACTIONS_ID_TOKEN_REQUEST_URL"
	envActionsToken    = "ACTIONS_ID_TOKEN_REQUEST_TOKEN"
)

// maxIDTokenReply bounds the Actions ID-token answer (a JWT of a few KiB).
const maxIDTokenReply = 1 << 20

// credential builds the azidentity credential of an OU and the identity that names its
// Graph client (OUs of one identity share one client, its caches and its token cache).
// Every secret it reads joins r.secrets before anything can quote it.
func (r *Registry) credential(ou *config.OU) (azcore.TokenCredential, string, error) {
	get := func(k string) string { return strings.TrimSpace(ou.Settings.Get(k).Text()) }
	env := func(key, envName string) string {
		if v := get(key); v != "" {
			return v
		}
		v, _ := r.opt.Getenv(envName)
		return strings.TrimSpace(v)
	}
	secretEnv, _ := r.opt.Getenv(envSecret)
	kind := aadspec.Kind(ou, strings.TrimSpace(secretEnv) != "")
	var missing []string
	need := func(v, what string) string {
		if v == "" {
			missing = append(missing, what)
		}
		return v
	}
	tenantClient := func() (string, string) {
		return need(env("tenant_id", envTenant), "tenant_id (or $"+envTenant+")"),
			need(env("client_id", envClient), "client_id (or $"+envClient+")")
	}
	fail := func() error {
		return fmt.Errorf("OU %s: Azure AD credential %s: missing %s", ou.Key, kind, strings.Join(missing, ", "))
	}
	co := r.clientOptions()
	noDiscovery := r.opt.AuthorityHost != ""
	var (
		cred     azcore.TokenCredential
		identity string
		err      error
	)
	switch kind {
	case aadspec.ClientSecret:
		tenant, client := tenantClient()
		secret := need(env("client_secret", envSecret), "client_secret (or $"+envSecret+")")
		if len(missing) > 0 {
			return nil, "", fail()
		}
		r.secrets.Add(secret)
		identity = tenant + "/" + client
		cred, err = azidentity.NewClientSecretCredential(tenant, client, secret,
			&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: noDiscovery})
	case aadspec.Certificate:
		tenant, client := tenantClient()
		path := need(get("client_certificate_path"), "client_certificate_path")
		if len(missing) > 0 {
			return nil, "", fail()
		}
		password := env("client_certificate_password", envCertPassword)
		r.secrets.Add(password)
		data, rerr := os.ReadFile(path)
		if rerr != nil {
			return nil, "", fmt.Errorf("OU %s: reading client_certificate_path: %w", ou.Key, rerr)
		}
		certs, key, perr := azidentity.ParseCertificates(data, []byte(password))
		if perr != nil {
			// Never the file's content or the password: ParseCertificates names neither, and
			// the mask catches the password if a later version did.
			return nil, "", r.secrets.Error(fmt.Errorf("OU %s: client_certificate_path %s: %w", ou.Key, path, perr))
		}
		identity = tenant + "/" + client
		cred, err = azidentity.NewClientCertificateCredential(tenant, client, certs, key,
			&azidentity.ClientCertificateCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: noDiscovery})
	case aadspec.WorkloadIdentity:
		tenant, client := tenantClient()
		file, _ := r.opt.Getenv(envFederatedFile)
		need(strings.TrimSpace(file), "$"+envFederatedFile)
		if len(missing) > 0 {
			return nil, "", fail()
		}
		identity = tenant + "/" + client
		cred, err = azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{ClientOptions: co,
			TenantID: tenant, ClientID: client, TokenFilePath: strings.TrimSpace(file), DisableInstanceDiscovery: noDiscovery})
	case aadspec.GitHubOIDC:
		tenant, client := tenantClient()
		reqURL, _ := r.opt.Getenv(envActionsTokenURL)
		reqToken, _ := r.opt.Getenv(envActionsToken)
		need(reqURL, "$"+envActionsTokenURL+" (the job needs `permissions: id-token: write`)")
		need(reqToken, "$"+envActionsToken)
		if len(missing) > 0 {
			return nil, "", fail()
		}
		r.secrets.Add(reqToken)
		o := &actionsOIDC{url: reqURL, token: reqToken, client: r.tokenClient(), secrets: &r.secrets}
		identity = tenant + "/" + client
		// azidentity calls the callback whenever it needs a new access token, so every
		// exchange gets a fresh ID token: an ID token lives minutes, and one fetched at the
		// start would fail a long run's later exchanges (AADSTS700024).
		cred, err = azidentity.NewClientAssertionCredential(tenant, client, o.assertion,
			&azidentity.ClientAssertionCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: noDiscovery})
	case aadspec.ManagedIdentity:
		// Only the OU's client_id picks a user-assigned identity: $AZURE_CLIENT_ID often
		// names an app registration in the same environment.
		o := &azidentity.ManagedIdentityCredentialOptions{ClientOptions: co}
		identity = "managed-identity"
		if id := get("client_id"); id != "" {
			o.ID = azidentity.ClientID(id)
			identity += "/" + id
		}
		cred, err = azidentity.NewManagedIdentityCredential(o)
	case aadspec.AzureCLI:
		tenant := env("tenant_id", envTenant)
		identity = "azure-cli/" + tenant
		cred, err = azidentity.NewAzureCLICredential(&azidentity.AzureCLICredentialOptions{TenantID: tenant})
	case aadspec.Default:
		tenant := env("tenant_id", envTenant)
		identity = "default/" + tenant
		cred, err = azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: co,
			TenantID: tenant, DisableInstanceDiscovery: noDiscovery})
	default:
		// The config loader refuses other kinds; a config built in code may not have.
		return nil, "", fmt.Errorf("OU %s: unknown Azure AD credential kind %q; it must be one of: %s", ou.Key, kind, strings.Join(aadspec.Kinds, ", "))
	}
	if err != nil {
		return nil, "", r.secrets.Error(fmt.Errorf("OU %s: Azure AD credential %s: %w", ou.Key, kind, err))
	}
	return cred, kind + ":" + identity, nil
}

// tokenClient is the HTTP client of token requests: the keep-alive transport with answers
// capped like Graph's, uncounted (they are not Graph).
func (r *Registry) tokenClient() *http.Client {
	if r.transport == nil {
		c := *r.opt.HTTPClient
		c.Transport = r.capped
		return &c
	}
	return &http.Client{Transport: r.capped, Timeout: r.timeout}
}

// clientOptions are the azidentity client options of every credential: the token client,
// and the authority host when Options.AuthorityHost names one (a sovereign cloud, a fake).
func (r *Registry) clientOptions() azcore.ClientOptions {
	co := azcore.ClientOptions{Transport: r.tokenClient()}
	if h := r.opt.AuthorityHost; h != "" {
		co.Cloud = cloud.Configuration{ActiveDirectoryAuthorityHost: strings.TrimRight(h, "/") + "/", Services: map[cloud.ServiceName]cloud.ServiceConfiguration{}}
	}
	return co
}

// actionsOIDC fetches GitHub Actions ID tokens for the Entra ID token exchange.
type actionsOIDC struct {
	url, token string
	client     *http.Client
	secrets    *redact.Set
	mu         sync.Mutex
	// last is the previous ID token, unmasked once the next replaces it.
	last string
}

// assertion requests a fresh ID token with audience api://AzureADTokenExchange, as GitHub
// documents (GET $ACTIONS_ID_TOKEN_REQUEST_URL&audience=..., bearer
// $ACTIONS_ID_TOKEN_REQUEST_TOKEN, answer {"value": jwt}).
func (a *actionsOIDC) assertion(ctx context.Context) (string, error) {
	u, err := url.Parse(a.url)
	if err != nil {
		return "", fmt.Errorf("%s is not a URL: %w", envActionsTokenURL, err)
	}
	q := u.Query()
	q.Set("audience", "api://AzureADTokenExchange")
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("requesting a GitHub Actions ID token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return "", a.secrets.Error(fmt.Errorf("requesting a GitHub Actions ID token: %w", err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIDTokenReply))
	if err != nil {
		return "", fmt.Errorf("reading the GitHub Actions ID token: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", a.secrets.Error(fmt.Errorf("requesting a GitHub Actions ID token: %s: %.200s", resp.Status, body))
	}
	var out struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Value == "" {
		return "", errors.Join(errors.New("the GitHub Actions ID token answer has no value"), err)
	}
	a.secrets.Add(out.Value)
	a.mu.Lock()
	prev := a.last
	a.last = out.Value
	a.mu.Unlock()
	if prev != "" {
		a.secrets.Remove(prev)
	}
	return out.Value, nil
}
