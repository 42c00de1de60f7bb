//! Diesel's view of the tables created by `migrations/`; kept by hand, checked by adapter tests.

diesel::table! {
    organizations (id) {
        id -> Uuid,
        name -> Varchar,
        plugins_access_level -> Int2,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    projects (id) {
        id -> Int4,
        organization_id -> Uuid,
        name -> Varchar,
        api_token -> Varchar,
        created_at -> Timestamptz,
        survey_config -> Nullable<Jsonb>,
    }
}

diesel::table! {
    users (id) {
        id -> Int4,
        uuid -> Uuid,
        email -> Varchar,
        first_name -> Varchar,
        last_name -> Varchar,
        distinct_id -> Varchar,
        is_active -> Bool,
        is_email_verified -> Bool,
        current_organization_id -> Nullable<Uuid>,
        current_project_id -> Nullable<Int4>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    organization_memberships (organization_id, user_id) {
        organization_id -> Uuid,
        user_id -> Int4,
        level -> Int2,
        joined_at -> Timestamptz,
    }
}

diesel::table! {
    personal_api_keys (id) {
        id -> Uuid,
        user_id -> Int4,
        label -> Varchar,
        secure_value -> Varchar,
        mask -> Varchar,
        scopes -> Array<Text>,
        scoped_teams -> Nullable<Array<Int4>>,
        scoped_organizations -> Nullable<Array<Text>>,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    feature_flags (id) {
        id -> Int4,
        project_id -> Int4,
        name -> Text,
        key -> Varchar,
        filters -> Jsonb,
        deleted -> Bool,
        active -> Bool,
        ensure_experience_continuity -> Bool,
        created_by_id -> Nullable<Int4>,
        created_at -> Timestamptz,
        is_remote_configuration -> Bool,
    }
}

diesel::table! {
    cohorts (id) {
        id -> Int4,
        project_id -> Int4,
        name -> Text,
        description -> Text,
        filters -> Jsonb,
        deleted -> Bool,
        created_by_id -> Nullable<Int4>,
        created_at -> Timestamptz,
        is_static -> Bool,
    }
}

diesel::table! {
    cohort_members (project_id, distinct_id, cohort_id) {
        project_id -> Int4,
        distinct_id -> Text,
        cohort_id -> Int4,
    }
}

diesel::table! {
    group_types (project_id, group_type_index) {
        project_id -> Int4,
        group_type_index -> Int2,
        group_type -> Varchar,
        name_singular -> Nullable<Varchar>,
        name_plural -> Nullable<Varchar>,
        default_columns -> Nullable<Jsonb>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    groups (project_id, group_type, group_key) {
        project_id -> Int4,
        group_type -> Varchar,
        group_key -> Varchar,
        properties -> Jsonb,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    hash_key_overrides (project_id, distinct_id, feature_flag_key) {
        project_id -> Int4,
        distinct_id -> Text,
        feature_flag_key -> Varchar,
        hash_key -> Text,
    }
}

diesel::table! {
    early_access_features (id) {
        id -> Uuid,
        project_id -> Int4,
        name -> Varchar,
        description -> Text,
        stage -> Text,
        documentation_url -> Varchar,
        feature_flag_id -> Int4,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    surveys (id) {
        id -> Uuid,
        project_id -> Int4,
        name -> Varchar,
        description -> Text,
        #[sql_name = "type"]
        survey_type -> Varchar,
        linked_flag_id -> Nullable<Int4>,
        targeting_flag_id -> Nullable<Int4>,
        owns_targeting_flag -> Bool,
        questions -> Nullable<Jsonb>,
        conditions -> Nullable<Jsonb>,
        appearance -> Nullable<Jsonb>,
        created_at -> Timestamptz,
        created_by_id -> Nullable<Int4>,
        updated_at -> Timestamptz,
        start_date -> Nullable<Timestamptz>,
        end_date -> Nullable<Timestamptz>,
        archived -> Bool,
        responses_limit -> Nullable<Int4>,
        schedule -> Varchar,
        iteration_count -> Nullable<Int4>,
        iteration_frequency_days -> Nullable<Int4>,
        iteration_start_dates -> Nullable<Array<Timestamptz>>,
        current_iteration -> Nullable<Int4>,
        current_iteration_start_date -> Nullable<Timestamptz>,
        enable_partial_responses -> Bool,
        base_language -> Varchar,
        translations -> Nullable<Jsonb>,
        enable_iframe_embedding -> Bool,
        response_sampling_start_date -> Nullable<Timestamptz>,
        response_sampling_interval_type -> Nullable<Varchar>,
        response_sampling_interval -> Nullable<Int4>,
        response_sampling_limit -> Nullable<Int4>,
        response_sampling_rollout -> Float8,
        response_sampling_checked_on -> Nullable<Date>,
        form_content -> Nullable<Jsonb>,
    }
}

diesel::table! {
    survey_activity (id) {
        id -> Uuid,
        project_id -> Int4,
        survey_id -> Nullable<Uuid>,
        user_id -> Nullable<Int4>,
        activity -> Varchar,
        detail -> Jsonb,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(survey_activity -> users (user_id));
diesel::allow_tables_to_appear_in_same_query!(survey_activity, users);

diesel::joinable!(projects -> organizations (organization_id));
diesel::joinable!(organization_memberships -> organizations (organization_id));
diesel::joinable!(organization_memberships -> users (user_id));
diesel::joinable!(personal_api_keys -> users (user_id));
diesel::joinable!(feature_flags -> projects (project_id));
diesel::joinable!(feature_flags -> users (created_by_id));
diesel::joinable!(cohorts -> projects (project_id));
diesel::joinable!(cohorts -> users (created_by_id));
diesel::joinable!(cohort_members -> cohorts (cohort_id));
diesel::joinable!(early_access_features -> projects (project_id));
diesel::joinable!(early_access_features -> feature_flags (feature_flag_id));
diesel::joinable!(surveys -> projects (project_id));
diesel::joinable!(surveys -> users (created_by_id));
// surveys reference feature_flags twice (linked and targeting), so there is no single
// joinable; flags are loaded by id instead.

diesel::allow_tables_to_appear_in_same_query!(
    organizations,
    projects,
    users,
    organization_memberships,
    personal_api_keys,
    feature_flags,
    cohorts,
    cohort_members,
    early_access_features,
    surveys,
    plugins,
    plugin_source_files,
    plugin_configs,
    plugin_activity,
);

diesel::table! {
    plugins (id) {
        id -> Int4,
        organization_id -> Uuid,
        plugin_type -> Varchar,
        name -> Nullable<Varchar>,
        description -> Nullable<Text>,
        url -> Nullable<Varchar>,
        url_key -> Nullable<Varchar>,
        icon -> Nullable<Varchar>,
        config_schema -> Jsonb,
        tag -> Nullable<Varchar>,
        latest_tag -> Nullable<Varchar>,
        latest_tag_checked_at -> Nullable<Timestamptz>,
        is_global -> Bool,
        is_stateless -> Bool,
        capabilities -> Jsonb,
        metrics -> Jsonb,
        public_jobs -> Jsonb,
        archive -> Nullable<Bytea>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    plugin_source_files (plugin_id, filename) {
        plugin_id -> Int4,
        filename -> Varchar,
        source -> Text,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    plugin_configs (id) {
        id -> Int4,
        project_id -> Int4,
        plugin_id -> Int4,
        enabled -> Bool,
        order -> Int4,
        config -> Jsonb,
        name -> Nullable<Varchar>,
        description -> Nullable<Varchar>,
        deleted -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    plugin_activity (id) {
        id -> Uuid,
        organization_id -> Uuid,
        plugin_id -> Int4,
        user_id -> Nullable<Int4>,
        scope -> Varchar,
        activity -> Varchar,
        detail -> Jsonb,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(plugins -> organizations (organization_id));
diesel::joinable!(plugin_source_files -> plugins (plugin_id));
diesel::joinable!(plugin_configs -> plugins (plugin_id));
diesel::joinable!(plugin_configs -> projects (project_id));
diesel::joinable!(plugin_activity -> users (user_id));

diesel::table! {
    survey_events (project_id, uuid) {
        project_id -> Int4,
        uuid -> Uuid,
        event -> Varchar,
        survey_id -> Varchar,
        distinct_id -> Varchar,
        timestamp -> Timestamptz,
        submission_id -> Nullable<Varchar>,
        properties -> Jsonb,
        received_at -> Timestamptz,
    }
}

diesel::table! {
    survey_responses (project_id, survey_id, submission_key) {
        project_id -> Int4,
        survey_id -> Varchar,
        submission_key -> Varchar,
        submission_id -> Nullable<Varchar>,
        event_uuid -> Uuid,
        distinct_id -> Varchar,
        timestamp -> Timestamptz,
        answers -> Jsonb,
        completed -> Nullable<Bool>,
        archived -> Bool,
        partially_completed -> Bool,
        context -> Jsonb,
    }
}

diesel::table! {
    survey_response_counts (project_id, survey_id, slot) {
        project_id -> Int4,
        survey_id -> Varchar,
        responses -> Int8,
        archived -> Int8,
        slot -> Int2,
    }
}

diesel::table! {
    person_properties (project_id, distinct_id) {
        project_id -> Int4,
        distinct_id -> Text,
        properties -> Jsonb,
        updated_at -> Timestamptz,
        uuid -> Uuid,
    }
}

diesel::table! {
    webhooks (id) {
        id -> Uuid,
        project_id -> Int4,
        url -> Text,
        events -> Array<Text>,
        survey_ids -> Nullable<Array<Uuid>>,
        format -> Varchar,
        enabled -> Bool,
        disabled_reason -> Nullable<Varchar>,
        description -> Text,
        secret -> Text,
        previous_secret -> Nullable<Text>,
        previous_secret_expires_at -> Nullable<Timestamptz>,
        consecutive_failures -> Int4,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    webhook_deliveries (id) {
        id -> Uuid,
        seq -> Int8,
        webhook_id -> Uuid,
        project_id -> Int4,
        kind -> Varchar,
        event_uuid -> Nullable<Uuid>,
        survey_id -> Nullable<Varchar>,
        submission_key -> Nullable<Varchar>,
        state -> Varchar,
        attempts_made -> Int4,
        next_attempt_at -> Timestamptz,
        body -> Nullable<Bytea>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    webhook_attempts (id) {
        id -> Int8,
        delivery_id -> Uuid,
        attempted_at -> Timestamptz,
        status_code -> Nullable<Int2>,
        error -> Nullable<Text>,
        duration_ms -> Int4,
    }
}

diesel::joinable!(webhook_deliveries -> webhooks (webhook_id));
diesel::joinable!(webhook_attempts -> webhook_deliveries (delivery_id));
diesel::allow_tables_to_appear_in_same_query!(webhooks, webhook_deliveries, webhook_attempts);

diesel::table! {
    webhook_activity (id) {
        id -> Uuid,
        project_id -> Int4,
        webhook_id -> Uuid,
        user_id -> Nullable<Int4>,
        activity -> Varchar,
        detail -> Jsonb,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(webhook_activity -> users (user_id));
diesel::allow_tables_to_appear_in_same_query!(webhook_activity, users);
